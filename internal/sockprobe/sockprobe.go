// Package sockprobe owns one test aid: sending raw bytes on a new unix
// socket connection and reading back whatever the server answers, to
// check how a server treats input no well-behaved client would send
// (malformed JSON, NULs, oversized requests). Tests of the OVSDB server
// and of the daemon share it; it imports nothing of gvs.
package sockprobe

import (
	"bytes"
	"errors"
	"net"
	"time"
)

// Exchange connects to the unix socket sock, writes data (concurrently, so
// that a server that stops reading cannot block the probe) and returns
// what came back within wait, followed by "<EOF>" if the server closed
// the connection or "<open>" if it did not.
func Exchange(sock string, data []byte, wait time.Duration) (string, error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return "", err
	}
	defer c.Close()
	go c.Write(data) //nolint:errcheck // a server that closes early makes it fail, which is what is probed
	var out bytes.Buffer
	buf := make([]byte, 64<<10)
	c.SetReadDeadline(time.Now().Add(wait)) //nolint:errcheck // a unix socket takes deadlines
	for {
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return out.String() + "<open>", nil
			}
			return out.String() + "<EOF>", nil
		}
	}
}
