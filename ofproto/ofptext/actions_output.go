package ofptext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The output family's text (see package ofp's actions_output.go): output
// (to a port, a subfield, or truncated), enqueue, set_queue, pop_queue,
// group and controller.

func init() {
	registerParsers(map[string]actionParser{
		"output":     single(parseOutput),
		"controller": single(parseController),
		"enqueue":    parseEnqueue,
		"set_queue":  uint32Arg(ofp.ActSetQueue),
		"pop_queue":  noArg(ofp.ActPopQueue),
		"group":      uint32Arg(ofp.ActGroup),
	})
	registerFormatters(map[ofp.ActionType]actionFormatter{
		ofp.ActOutput:      formatOutput,
		ofp.ActOutputReg:   func(sb *strings.Builder, a *ofp.Action, _ uint8) { sb.WriteString("output:" + formatSubfield(a.Src)) },
		ofp.ActOutputTrunc: formatOutputTrunc,
		ofp.ActEnqueue:     formatEnqueue,
		ofp.ActSetQueue:    decimal("set_queue:"),
		ofp.ActPopQueue:    word("pop_queue"),
		ofp.ActGroup:       decimal("group:"),
		ofp.ActController:  func(sb *strings.Builder, a *ofp.Action, _ uint8) { formatController(sb, a.Controller()) },
	})
}

// uint32Arg parses an action of kind k whose argument is a 32-bit number
// read as parseUint32Wrap does.
func uint32Arg(k ofp.ActionType) actionParser {
	return func(t *actionText) ([]ofp.Action, error) {
		n, err := parseUint32Wrap(t.arg)
		if err != nil {
			return nil, err
		}
		return []ofp.Action{{Type: k, Arg: n}}, nil
	}
}

func parseEnqueue(t *actionText) ([]ofp.Action, error) {
	port, queue, ok := strings.Cut(t.arg, ":")
	if !ok {
		port, queue, ok = strings.Cut(t.arg, ",")
	}
	if !ok {
		return nil, errf("\"enqueue\" syntax is \"enqueue:PORT:QUEUE\" or \"enqueue(PORT,QUEUE)\"")
	}
	p, pok := parsePort(port)
	if !pok {
		return nil, errf("%s: enqueue to unknown port", port)
	}
	q, qerr := strconv.ParseUint(queue, 0, 32)
	if qerr != nil {
		return nil, errf("invalid numeric format %s", queue)
	}
	return []ofp.Action{{Type: ofp.ActEnqueue, Port: uint32(p), Arg: q}}, nil
}

func formatOutput(sb *strings.Builder, a *ofp.Action, _ uint8) {
	p := uint16(a.Port)
	switch {
	case p == portController:
		fmt.Fprintf(sb, "CONTROLLER:%d", a.MaxLen)
	case p >= portMax:
		sb.WriteString(formatPort(p))
	default:
		fmt.Fprintf(sb, "output:%d", p)
	}
}

func formatOutputTrunc(sb *strings.Builder, a *ofp.Action, _ uint8) {
	fmt.Fprintf(sb, "output(port=%s,max_len=%d)", formatPort(uint16(a.Port)), a.Arg)
}

func formatEnqueue(sb *strings.Builder, a *ofp.Action, _ uint8) {
	fmt.Fprintf(sb, "enqueue:%s:%d", formatPort(uint16(a.Port)), a.Arg)
}

func outputAction(p uint16) ofp.Action {
	a := ofp.Action{Type: ofp.ActOutput, Port: uint32(p)}
	if p == portController {
		a.MaxLen = 0xffff
	}
	return a
}

func parseOutput(arg string) (ofp.Action, error) {
	if strings.Contains(arg, "port") && strings.Contains(arg, "max_len") {
		a := ofp.Action{Type: ofp.ActOutputTrunc}
		for _, kv := range strings.Split(arg, ",") {
			k, val, _ := strings.Cut(kv, "=")
			switch k {
			case "port":
				p, ok := parsePort(val)
				if !ok {
					return a, errf("output to unknown truncate port: %s", val)
				}
				a.Port = uint32(p)
			case "max_len":
				n, err := strconv.ParseUint(val, 0, 32)
				if err != nil {
					return a, errf("%s: invalid max_len", val)
				}
				if n < 14 { // an Ethernet header
					return a, errf("max_len %d is less than the minimum value 14", n)
				}
				a.Arg = n
			default:
				return a, errf("invalid key '%s' in output_trunc argument", k)
			}
		}
		return a, nil
	}
	p, ok := parsePort(arg)
	if ok && p != portNone {
		return outputAction(p), nil
	}
	if ok { // NONE (65535): refused by the action check
		return ofp.Action{}, errf("actions are invalid with specified match (OFPBAC_BAD_OUT_PORT)")
	}
	if sf, err := parseSubfield(arg); err == nil {
		return ofp.Action{Type: ofp.ActOutputReg, Src: sf, MaxLen: 0xffff}, nil
	}
	return ofp.Action{}, errf("%s: output to unknown port", arg)
}

// reasonNames are the packet-in reasons controller() names, by value;
// read-only.
var reasonNames = [...]string{"no_match", "action", "invalid_ttl", "action_set", "group", "packet_out"}

func parseController(arg string) (ofp.Action, error) {
	c := &ofp.Controller{MaxLen: 0xffff, Reason: ofp.ReasonAction, MeterID: ofp.NoMeter}
	if arg != "" && !strings.ContainsAny(arg, "=,") && arg != "pause" {
		n, err := strconv.ParseUint(arg, 0, 16)
		if err != nil {
			return ofp.Action{}, errf("unknown key \"%s\" parsing controller action", arg)
		}
		c.MaxLen = uint16(n)
	} else if arg != "" {
		items, err := splitTop(arg)
		if err != nil {
			return ofp.Action{}, err
		}
		for _, kv := range items {
			k, val, _ := strings.Cut(kv, "=")
			var n uint64
			switch k {
			case "reason":
				i := 0
				for i < len(reasonNames) && reasonNames[i] != val {
					i++
				}
				if i == len(reasonNames) {
					return ofp.Action{}, errf("unknown reason \"%s\"", val)
				}
				c.Reason = uint8(i)
			case "max_len", "id", "meter_id":
				bits := map[string]int{"max_len": 16, "id": 16, "meter_id": 32}[k]
				if n, err = parseUintArg(val, bits); err != nil {
					return ofp.Action{}, err
				}
				switch k {
				case "max_len":
					c.MaxLen = uint16(n)
				case "id":
					c.ID = uint16(n)
				default:
					c.MeterID = uint32(n)
				}
			case "userdata":
				if c.Userdata, err = parseHexBytes(val); err != nil {
					return ofp.Action{}, errf("bad hex digit in `controller' action `userdata'")
				}
			case "pause":
				c.Pause = true
			default:
				return ofp.Action{}, errf("unknown key \"%s\" parsing controller action", k)
			}
		}
	}
	if c.Reason == ofp.ReasonAction && c.ID == 0 && len(c.Userdata) == 0 && !c.Pause && c.MeterID == ofp.NoMeter {
		a := outputAction(portController)
		a.MaxLen = c.MaxLen
		return a, nil
	}
	return ofp.Action{Type: ofp.ActController, Body: c}, nil
}

func formatController(sb *strings.Builder, c *ofp.Controller) {
	if c == nil {
		return
	}
	if c.Reason == ofp.ReasonAction && c.ID == 0 && len(c.Userdata) == 0 && !c.Pause && c.MeterID == ofp.NoMeter {
		fmt.Fprintf(sb, "CONTROLLER:%d", c.MaxLen)
		return
	}
	var parts []string
	if c.Reason != ofp.ReasonAction {
		parts = append(parts, "reason="+nameOf(reasonNames[:], uint16(c.Reason)))
	}
	if c.MaxLen != 0xffff {
		parts = append(parts, "max_len="+strconv.Itoa(int(c.MaxLen)))
	}
	if c.ID != 0 {
		parts = append(parts, "id="+strconv.Itoa(int(c.ID)))
	}
	if len(c.Userdata) > 0 {
		parts = append(parts, "userdata="+formatDotHex(c.Userdata))
	}
	if c.Pause {
		parts = append(parts, "pause")
	}
	if c.MeterID != ofp.NoMeter {
		parts = append(parts, "meter_id="+strconv.FormatUint(uint64(c.MeterID), 10))
	}
	sb.WriteString("controller(" + strings.Join(parts, ",") + ")")
}
