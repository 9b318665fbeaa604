package ofctl

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// request opens a connection to target, sends req and returns the
// replies; an OFPT_ERROR reply is printed as ovs-ofctl does.
func (e *env) request(target string, req ofp.Message) ([]*ofp.Msg, error) {
	c, err := e.open(target)
	if err != nil {
		return nil, err
	}
	defer c.close()
	msgs, _, err := c.transact(req)
	return msgs, e.reportReply(err)
}

func showCmd(e *env, args []string) error {
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	_, raws, err := c.transact(&ofp.FeaturesRequest{})
	if err != nil {
		c.close()
		return e.reportReply(err)
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	for _, b := range raws {
		if err := printMessage(w, b); err != nil {
			c.close()
			return err
		}
	}
	if c.version >= mf.OF13 {
		descs, _, err := c.transact(&ofp.PortDescRequest{PortNo: ofp.PortAny})
		if err != nil {
			c.close()
			return e.reportReply(err)
		}
		printPortDescs(w, descs)
	}
	c.close()
	c, err = e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	_, raws, err = c.transact(&ofp.GetConfigRequest{})
	if err != nil {
		return e.reportReply(err)
	}
	for _, b := range raws {
		if err := printMessage(w, b); err != nil {
			return err
		}
	}
	return nil
}

func dumpDescCmd(e *env, args []string) error {
	msgs, err := e.request(args[0], &ofp.DescStatsRequest{})
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	for _, m := range msgs {
		if _, ok := m.Body.(*ofp.DescStatsReply); !ok {
			return fmt.Errorf("unexpected reply %s", m.Raw)
		}
		printDescReply(w, m)
	}
	return nil
}

func dumpPortsDescCmd(e *env, args []string) error {
	req := &ofp.PortDescRequest{PortNo: ofp.PortAny}
	if len(args) > 1 {
		p, err := parseOutPort(args[1])
		if err != nil {
			return err
		}
		req.PortNo = p
	}
	msgs, err := e.request(args[0], req)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	printPortDescs(w, msgs)
	return nil
}

func printPortDescs(w *bufio.Writer, msgs []*ofp.Msg) {
	for _, m := range msgs {
		if _, ok := m.Body.(*ofp.PortDescReply); ok {
			printPortDescReply(w, m)
		}
	}
}

// reservedPortNames name the OpenFlow 1.0 reserved ports from 0xfff8.
var reservedPortNames = [8]string{"IN_PORT", "TABLE", "NORMAL", "FLOOD", "ALL", "CONTROLLER", "LOCAL", "ANY"}

// portName formats a 32-bit port number as ovs-ofctl does.
func portName(p uint32) string {
	p16, err := ofp.PortFromOF11(p)
	switch {
	case err != nil:
		return strconv.FormatUint(uint64(p), 10)
	case p16 >= 0xfff8:
		return reservedPortNames[p16-0xfff8]
	}
	return strconv.FormatUint(uint64(p16), 10)
}

var (
	portConfigNames = []string{"PORT_DOWN", "NO_STP", "NO_RECV", "NO_RECV_STP", "NO_FLOOD", "NO_FWD", "NO_PACKET_IN"}
	portStateNames  = []string{"LINK_DOWN", "BLOCKED", "LIVE"}
	// featureNames are the OpenFlow 1.1+ port feature bits; OpenFlow 1.0
	// lacks 40GB_FD, 100GB_FD, 1TB_FD and OTHER (its bits 7-11 are
	// COPPER ... PAUSE_ASYM).
	featureNames = []string{"10MB-HD", "10MB-FD", "100MB-HD", "100MB-FD", "1GB-HD", "1GB-FD", "10GB-FD",
		"40GB-FD", "100GB-FD", "1TB-FD", "OTHER", "COPPER", "FIBER", "AUTO_NEG", "AUTO_PAUSE", "AUTO_PAUSE_ASYM"}
	featureSpeeds = []uint64{10e6, 10e6, 100e6, 100e6, 1e9, 1e9, 10e9, 40e9, 100e9, 1e12}
)

// features11 converts OpenFlow 1.0 feature bits to the 1.1+ layout.
func features11(f uint32, v uint8) uint32 {
	if v != mf.OF10 {
		return f
	}
	return f&0x7f | (f>>7&0x1f)<<11
}

func bitNames(w *bufio.Writer, bits uint32, names []string) {
	if bits == 0 {
		w.WriteString("0\n")
		return
	}
	first := true
	for i := 0; i < 32; i++ {
		if bits&(1<<i) == 0 {
			continue
		}
		if !first {
			w.WriteByte(' ')
		}
		first = false
		if i < len(names) {
			w.WriteString(names[i])
		} else {
			fmt.Fprintf(w, "0x%x", uint32(1)<<i)
		}
	}
	w.WriteByte('\n')
}

// speedKbps is the highest speed among feature bits, as Open vSwitch
// derives OpenFlow 1.0 port speeds.
func speedKbps(f uint32) uint32 {
	var best uint64
	for i, s := range featureSpeeds {
		if f&(1<<i) != 0 && s > best {
			best = s
		}
	}
	return uint32(best / 1000)
}

func printPorts(w *bufio.Writer, v uint8, ports []ofp.Port) {
	ports = slices.Clone(ports)
	slices.SortFunc(ports, func(a, b ofp.Port) int {
		pa, pb := a.PortNo, b.PortNo
		return int(int64(pa) - int64(pb))
	})
	for _, p := range ports {
		name := p.Name[:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		a := p.HWAddr
		fmt.Fprintf(w, " %s(%s): addr:%02x:%02x:%02x:%02x:%02x:%02x\n", portName(p.PortNo), name, a[0], a[1], a[2], a[3], a[4], a[5])
		w.WriteString("     config:     ")
		bitNames(w, p.Config, portConfigNames)
		w.WriteString("     state:      ")
		bitNames(w, p.State, portStateNames)
		for _, f := range []struct {
			label string
			bits  uint32
		}{{"current:    ", p.Curr}, {"advertised: ", p.Advertised}, {"supported:  ", p.Supported}, {"peer:       ", p.Peer}} {
			if f.bits != 0 {
				w.WriteString("     " + f.label)
				bitNames(w, features11(f.bits, v), featureNames)
			}
		}
		cur, maxs := p.CurrSpeed, p.MaxSpeed
		if v == mf.OF10 {
			cur, maxs = speedKbps(features11(p.Curr, v)), speedKbps(features11(p.Supported, v))
		}
		fmt.Fprintf(w, "     speed: %d Mbps now, %d Mbps max\n", cur/1000, maxs/1000)
	}
}

func dumpPortsCmd(e *env, args []string) error {
	req := &ofp.PortStatsRequest{PortNo: ofp.PortAny}
	if len(args) > 1 {
		p, err := parseOutPort(args[1])
		if err != nil {
			return err
		}
		req.PortNo = p
	}
	msgs, err := e.request(args[0], req)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	for _, m := range msgs {
		r, ok := m.Body.(*ofp.PortStatsReply)
		if !ok {
			return fmt.Errorf("unexpected reply %s", m.Raw)
		}
		if err := printPortStatsReply(w, m, r); err != nil {
			return err
		}
	}
	return nil
}

// counter prints a statistic, "?" when the switch does not keep it.
func counter(n uint64) string {
	if n == ^uint64(0) {
		return "?"
	}
	return strconv.FormatUint(n, 10)
}

func dumpTablesCmd(e *env, args []string) error {
	msgs, err := e.request(args[0], &ofp.TableStatsRequest{})
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	defer w.Flush()
	for _, m := range msgs {
		r, ok := m.Body.(*ofp.TableStatsReply)
		if !ok {
			return fmt.Errorf("unexpected reply %s", m.Raw)
		}
		printTableStatsReply(w, m, r)
	}
	return nil
}

// portNames asks the switch for its ports, as ovs-ofctl does for
// --names (a table lookup connection first, then the ports), and maps
// numbers to names that can be printed unquoted.
func (e *env) portNames(target string) (map[uint32]string, error) {
	if err := e.lookUpTableNames(target); err != nil {
		return nil, err
	}
	c, err := e.open(target)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var ports []ofp.Port
	if c.version < mf.OF13 {
		msgs, _, err := c.transact(&ofp.FeaturesRequest{})
		if err != nil {
			return nil, e.reportReply(err)
		}
		for _, m := range msgs {
			if f, ok := m.Body.(*ofp.FeaturesReply); ok {
				for _, p := range f.Ports {
					if c.version == mf.OF10 {
						p.PortNo = ofp.PortToOF11(uint16(p.PortNo))
					}
					ports = append(ports, p)
				}
			}
		}
	} else {
		msgs, _, err := c.transact(&ofp.PortDescRequest{PortNo: ofp.PortAny})
		if err != nil {
			return nil, e.reportReply(err)
		}
		for _, m := range msgs {
			if d, ok := m.Body.(*ofp.PortDescReply); ok {
				ports = append(ports, d.Ports...)
			}
		}
	}
	names := map[uint32]string{}
	for _, p := range ports {
		name := p.Name[:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if plainPortName.Match(name) && !isReservedPortName(string(name)) {
			names[p.PortNo] = string(name)
		}
	}
	return names, nil
}

// plainPortName matches names ovs-ofctl prints without quotes.
var plainPortName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

func isReservedPortName(s string) bool {
	_, ok := reservedPorts[strings.ToUpper(s)]
	return ok
}

// portRefRE finds port numbers in a formatted flow: the in_port match
// and output actions.
var portRefRE = regexp.MustCompile(`\b(in_port=|output:)([0-9]+)\b`)

func withPortNames(line string, names map[uint32]string) string {
	return portRefRE.ReplaceAllStringFunc(line, func(m string) string {
		sub := portRefRE.FindStringSubmatch(m)
		n, err := strconv.ParseUint(sub[2], 10, 32)
		if err != nil {
			return m
		}
		if name, ok := names[uint32(n)]; ok {
			return sub[1] + name
		}
		return m
	})
}

// lookUpTableNames asks the switch for its table names (table stats
// before OpenFlow 1.3, table features after), as ovs-ofctl does before
// it parses or prints flows with names.
func (e *env) lookUpTableNames(target string) error {
	c, err := e.open(target)
	if err != nil {
		return err
	}
	defer c.close()
	e.tableNames = map[uint8]string{}
	if c.version < mf.OF13 {
		msgs, _, err := c.transact(&ofp.TableStatsRequest{})
		if err != nil {
			return e.reportReply(err)
		}
		for _, m := range msgs {
			if r, ok := m.Body.(*ofp.TableStatsReply); ok {
				for _, ts := range r.Stats {
					if plainPortName.MatchString(ts.Name) {
						e.tableNames[ts.TableID] = ts.Name
					}
				}
			}
		}
		return nil
	}
	msgs, _, err := c.transact(&ofp.TableFeaturesRequest{})
	if err != nil {
		return e.reportReply(err)
	}
	for _, m := range msgs {
		if r, ok := m.Body.(*ofp.TableFeaturesReply); ok {
			for _, tf := range r.Tables {
				if plainPortName.MatchString(tf.Name) {
					e.tableNames[tf.TableID] = tf.Name
				}
			}
		}
	}
	return nil
}

// tableRefRE finds table numbers in a formatted flow: the table=
// column and resubmit's and goto_table's arguments.
var tableRefRE = regexp.MustCompile(`(table=|resubmit\([^,)]*,|goto_table:)([0-9]+)\b`)

func withTableNames(line string, names map[uint8]string) string {
	return tableRefRE.ReplaceAllStringFunc(line, func(m string) string {
		sub := tableRefRE.FindStringSubmatch(m)
		n, err := strconv.ParseUint(sub[2], 10, 8)
		if err != nil {
			return m
		}
		if name, ok := names[uint8(n)]; ok {
			return sub[1] + name
		}
		return m
	})
}
