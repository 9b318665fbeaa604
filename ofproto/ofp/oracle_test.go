package ofp_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/ovsoracle"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// startOVS runs Debian's ovsdb-server and ovs-vswitchd (dummy datapath,
// no kernel) in a private directory with one bridge, br0, and returns its
// OpenFlow management socket. Both daemons are stopped at cleanup.
func startOVS(t *testing.T) string {
	t.Helper()
	o := ovsoracle.Start(t, ovsoracle.Options{Init: true})
	o.Vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	return o.Mgmt("br0")
}

func readMsg(c net.Conn) ([]byte, error) {
	h := make([]byte, 8)
	if _, err := io.ReadFull(c, h); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(h[2:]))
	if n < 8 {
		return nil, io.ErrUnexpectedEOF
	}
	b := make([]byte, n)
	copy(b, h)
	_, err := io.ReadFull(c, b[8:])
	return b, err
}

// sendToOVS negotiates version v, sends msg and a barrier, and returns the
// error codes Open vSwitch replied with before the barrier reply.
func sendToOVS(t *testing.T, sock string, v uint8, msg []byte) []ofp.ErrCode {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	hello, _ := ofp.Encode(nil, v, 1, &ofp.Hello{})
	barrier, _ := ofp.Encode(nil, v, 0xbbbb, &ofp.BarrierRequest{})
	if _, err := c.Write(hello); err != nil {
		t.Fatal(err)
	}
	if _, err := readMsg(c); err != nil { // the switch's hello
		t.Fatal(err)
	}
	out := append(append([]byte(nil), msg...), barrier...)
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	var codes []ofp.ErrCode
	for {
		b, err := readMsg(c)
		if err != nil {
			return codes // the switch may drop the connection
		}
		m, err := ofp.Decode(b)
		if err != nil {
			t.Fatalf("cannot decode the switch's reply %x: %v", b, err)
		}
		switch body := m.Body.(type) {
		case *ofp.ErrorMsg:
			codes = append(codes, body.ErrCode(v))
		case *ofp.BarrierReply:
			if m.XID == 0xbbbb {
				return codes
			}
		}
	}
}

// Open vSwitch itself answers each malformed message with the error gvs's
// decoder returns for it, as encoded for the wire version (an error with no
// encoding in that version goes out as NXBRC_UNENCODABLE_ERROR, by both).
func TestMalformedMessagesGetTheSameErrorFromOVS(t *testing.T) {
	sock := startOVS(t)
	for _, tc := range malformed {
		switch tc.name {
		case "short header", "length beyond data", "unknown version":
			continue // framing and version errors end the stream, not one message
		}
		t.Run(tc.name, func(t *testing.T) {
			b := malformedBytes(tc.name, tc.msg)
			codes := sendToOVS(t, sock, b[0], b)
			want := ofp.NewErrorMsg(b[0], tc.want, nil).ErrCode(b[0])
			if len(codes) != 1 || codes[0] != want {
				t.Errorf("Open vSwitch answered %v, want [%s]", codes, want)
			}
		})
	}
}

// Every flow mod ovs-ofctl sent in the captures, re-encoded by gvs, gets
// from Open vSwitch the answer the original gets: none, or the semantic
// errors listed here.
func TestReencodedCapturedFlowModsGetOVSsAnswer(t *testing.T) {
	sock := startOVS(t)
	rejected := map[string]ofp.ErrCode{
		"nxm_fields_tunnel": ofp.NXFMFC_INVALID_TLV_FIELD, // tun_metadata without a TLV map
		"nxm_fields_meta":   ofp.OFPBRC_EPERM,             // matches fields the switch reserves
		"of15_fields_oxm":   ofp.OFPBRC_EPERM,             // likewise
	}
	for _, c := range readCaptures(t) {
		m, err := ofp.Decode(c.data)
		if err != nil || !c.sent {
			continue
		}
		if _, ok := m.Body.(*ofp.FlowMod); !ok {
			continue
		}
		out, err := ofp.EncodeMsg(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		codes := sendToOVS(t, sock, m.Version, out)
		if want, ok := rejected[c.name]; ok {
			if len(codes) != 1 || codes[0] != want {
				t.Errorf("%s: Open vSwitch answered %v, want [%s]", c.name, codes, want)
			}
		} else if len(codes) != 0 {
			t.Errorf("%s: Open vSwitch answered %v", c.name, codes)
		}
	}
}
