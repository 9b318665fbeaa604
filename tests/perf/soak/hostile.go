package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The hostile clients of issue 23 (-hostile), run beside the normal
// load:
//
//   - pipeliner: connects to db.sock, writes 2,000 selects whose replies
//     are about 100 kB each without reading any, holds the connection
//     for 10 s, closes it, and starts again;
//   - slow monitor: monitors Open_vSwitch's external_ids and never reads,
//     while a writer changes a 1 MB value every 500 ms; when gvs drops it
//     (no progress for GVS_OVSDB_STALL_TIMEOUT, 60 s by default) it
//     connects again;
//   - idle OpenFlow peer: connects to br0.mgmt, sends a hello and never
//     answers; gvs probes it after 60 s and closes it after 120 s; it
//     connects again.
type hostileStats struct {
	pipeRounds, selectsWritten atomic.Int64
	monitorsDropped            atomic.Int64
	bigWrites                  atomic.Int64
	ofEchoes, ofClosed         atomic.Int64
}

func startHostile(dir string, stop <-chan struct{}, wg *sync.WaitGroup, fail func(error)) *hostileStats {
	st := &hostileStats{}
	sock := filepath.Join(dir, "db.sock")
	wait := func(d time.Duration) bool {
		select {
		case <-stop:
			return false
		case <-time.After(d):
			return true
		}
	}
	wg.Add(4)
	// The 100 kB value the pipeliner's selects return.
	go func() {
		defer wg.Done()
		w, err := dialDB(sock)
		if err != nil {
			fail(err)
			return
		}
		defer w.Close()
		if err := w.transact(`{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["external_ids","insert",["map",[["hostile-select","` +
			strings.Repeat("s", 100<<10) + `"]]]]]}`); err != nil {
			fail(err)
			return
		}
		for i := 0; wait(500 * time.Millisecond); i++ {
			v := strings.Repeat(string(rune('a'+i%26)), 1<<20)
			if err := w.transact(`{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["external_ids","delete",["set",["hostile-big"]]],["external_ids","insert",["map",[["hostile-big","` + v + `"]]]]]}`); err != nil {
				fail(err)
				return
			}
			st.bigWrites.Add(1)
		}
	}()
	go func() {
		defer wg.Done()
		for wait(time.Second) {
			c, err := net.Dial("unix", sock)
			if err != nil {
				fail(err)
				return
			}
			go func() {
				for i := 0; i < 2000; i++ {
					c.SetWriteDeadline(time.Now().Add(10 * time.Second))
					if _, err := fmt.Fprintf(c, `{"id":%d,"method":"transact","params":["Open_vSwitch",{"op":"select","table":"Open_vSwitch","where":[],"columns":["external_ids"]}]}`, i); err != nil {
						return
					}
					st.selectsWritten.Add(1)
				}
			}()
			wait(10 * time.Second)
			c.Close()
			st.pipeRounds.Add(1)
		}
	}()
	go func() {
		defer wg.Done()
		for wait(time.Second) {
			c, err := net.Dial("unix", sock)
			if err != nil {
				fail(err)
				return
			}
			fmt.Fprint(c, `{"id":"m","method":"monitor","params":["Open_vSwitch","slow",{"Open_vSwitch":{"columns":["external_ids"]}}]}`)
			closed := make(chan struct{})
			go func() {
				// Never reads: only notices the close (a read after the
				// server hung up returns at once with what is left).
				<-stop
				c.Close()
				close(closed)
			}()
			if !waitClosed(c, stop) {
				<-closed
				return
			}
			st.monitorsDropped.Add(1)
			c.Close()
		}
	}()
	go func() {
		defer wg.Done()
		mgmt := filepath.Join(dir, "br0.mgmt")
		for wait(time.Second) {
			c, err := net.Dial("unix", mgmt)
			if err != nil {
				fail(err)
				return
			}
			c.Write([]byte{4, 0, 0, 8, 0, 0, 0, 1})
			done := make(chan struct{})
			go func() {
				select {
				case <-stop:
					c.Close()
				case <-done:
				}
			}()
			r := bufio.NewReader(c)
			for {
				h := make([]byte, 8)
				if _, err := io.ReadFull(r, h); err != nil {
					break
				}
				if _, err := io.CopyN(io.Discard, r, int64(binary.BigEndian.Uint16(h[2:4]))-8); err != nil {
					break
				}
				if h[1] == 2 {
					st.ofEchoes.Add(1)
				}
			}
			close(done)
			c.Close()
			st.ofClosed.Add(1)
		}
	}()
	return st
}

// waitClosed waits, without reading anything of what the server sends,
// until the server closes c (true) or stop (false): it polls the socket
// for the peer's hang-up once a second.
func waitClosed(c net.Conn, stop <-chan struct{}) bool {
	uc := c.(*net.UnixConn)
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	for {
		select {
		case <-stop:
			return false
		case <-time.After(time.Second):
		}
		hup := false
		raw.Control(func(fd uintptr) { hup = peerHungUp(int(fd)) })
		if hup {
			return true
		}
	}
}

// dbClient is a plain OVSDB connection that reads its replies.
type dbClient struct {
	c   net.Conn
	dec *json.Decoder
	id  int
}

func dialDB(sock string) (*dbClient, error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	return &dbClient{c: c, dec: json.NewDecoder(c)}, nil
}

func (d *dbClient) Close() error { return d.c.Close() }

func (d *dbClient) transact(op string) error {
	d.id++
	if _, err := fmt.Fprintf(d.c, `{"id":%d,"method":"transact","params":["Open_vSwitch",%s]}`, d.id, op); err != nil {
		return err
	}
	for {
		var m struct {
			ID     *int
			Result []map[string]any
			Error  any
		}
		d.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if err := d.dec.Decode(&m); err != nil {
			return fmt.Errorf("hostile writer: %w", err)
		}
		if m.ID != nil && *m.ID == d.id {
			for _, r := range m.Result {
				if e, ok := r["error"]; ok {
					return fmt.Errorf("hostile writer: %v: %v", e, r["details"])
				}
			}
			return nil
		}
	}
}
