package ofctl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
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
		if err := ofprint.Message(w, b); err != nil {
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
		if err := ofprint.Message(w, b); err != nil {
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
		ofprint.DescReply(w, m)
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
			ofprint.PortDescReply(w, m)
		}
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
		if err := ofprint.PortStatsReply(w, m, r); err != nil {
			return err
		}
	}
	return nil
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
		ofprint.TableStatsReply(w, m, r)
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

// dumpTableFeaturesCmd is dump-table-features: all parts of the reply
// are printed as one list, so runs of equal tables fold across parts.
func dumpTableFeaturesCmd(e *env, args []string) error {
	c, err := e.open(args[0])
	if err != nil {
		return err
	}
	defer c.close()
	if c.version < mf.OF13 {
		return fmt.Errorf("dump-table-features needs OpenFlow 1.3 or later ('-O OpenFlow13')")
	}
	l := ofprint.NewTableFeaturesList()
	msgs, raws, err := c.transact(&ofp.TableFeaturesRequest{})
	var re *replyError
	switch {
	case errors.As(err, &re):
		// ovs-ofctl prints the error to stdout and ends the (empty)
		// list as usual.
		w := bufio.NewWriter(e.stdout)
		printErrorMsg(w, re.raw)
		w.Flush()
	case err != nil:
		return err
	}
	for i, m := range msgs {
		if err := l.Add(m, raws[i]); err != nil {
			return err
		}
	}
	out := l.String()
	_, err = fmt.Fprintln(e.stdout, out)
	return err
}
