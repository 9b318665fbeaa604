// Package pcapfile reads the frames of a classic pcap capture file (the
// format Open vSwitch's netdev-dummy tx_pcap and tcpdump write), for
// tests that compare gvs's frames with ones captured from the real tools.
// It imports nothing of gvs.
package pcapfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// ReadFrames returns the frames of the pcap file at path, in order.
func ReadFrames(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var bo binary.ByteOrder
	switch {
	case len(b) >= 24 && binary.LittleEndian.Uint32(b) == 0xa1b2c3d4:
		bo = binary.LittleEndian
	case len(b) >= 24 && binary.BigEndian.Uint32(b) == 0xa1b2c3d4:
		bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("%s: not a pcap file", path)
	}
	var frames [][]byte
	for off := 24; off < len(b); {
		if off+16 > len(b) {
			return nil, errors.New(path + ": truncated record header")
		}
		n := int(bo.Uint32(b[off+8:]))
		off += 16
		if n < 0 || off+n > len(b) {
			return nil, errors.New(path + ": truncated record")
		}
		frames = append(frames, b[off:off+n])
		off += n
	}
	return frames, nil
}
