package ofctl

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofprint"
)

func ofpPrintCmd(e *env, args []string) error {
	b, err := parseHex(args[0])
	if err != nil {
		return err
	}
	verbosity := e.verbosity + 1 // ovs-ofctl's ofp-print is one step more verbose by default
	if len(args) > 1 {
		if verbosity, err = strconv.Atoi(args[1]); err != nil {
			verbosity = 0 // atoi's value for text, as ovs-ofctl
		}
	}
	w := bufio.NewWriter(e.stdout)
	if err := ofprint.MessageV(w, b, verbosity); err != nil {
		w.Flush()
		return fmt.Errorf("ofp-print: %w", err)
	}
	return w.Flush()
}

// parseHex accepts hex digit pairs separated by optional white space, as
// ovs-ofctl's ofp-print does.
func parseHex(s string) ([]byte, error) {
	s = strings.Join(strings.Fields(s), "")
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("trailing garbage following hex bytes")
	}
	return b, nil
}

func ofpParseCmd(e *env, args []string) error {
	f, err := os.Open(args[0])
	if err != nil {
		return fmt.Errorf("%s: open (%w)", args[0], unwrapPathErr(err))
	}
	defer f.Close()
	r := bufio.NewReader(f)
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	for {
		var hdr [8]byte
		n, err := io.ReadFull(r, hdr[:])
		if n == 0 && err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: unexpected end of file mid-message", args[0])
		}
		length := int(binary.BigEndian.Uint16(hdr[2:]))
		if length < len(hdr) {
			return fmt.Errorf("%s: %d-byte message is too short for OpenFlow", args[0], length)
		}
		msg := make([]byte, length)
		copy(msg, hdr[:])
		if _, err := io.ReadFull(r, msg[len(hdr):]); err != nil {
			return fmt.Errorf("%s: unexpected end of file mid-message", args[0])
		}
		if err := ofprint.Message(w, msg); err != nil {
			return fmt.Errorf("ofp-parse: %s: %w", args[0], err)
		}
	}
}
