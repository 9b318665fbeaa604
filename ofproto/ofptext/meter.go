// Meters: the ovs-ofctl meter syntax (add-meter, mod-meter, del-meters,
// dump-meters, meter-stats) and the meter text ovs-ofctl prints for meter
// mods and meter configurations.

package ofptext

import (
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// MeterSelect, as ParseMeterMod's command, parses a meter selector (the
// METER argument of dump-meters and meter-stats): the meter keyword only.
const MeterSelect = -1

// ParseMeterMod parses a meter in ovs-ofctl's syntax for command
// (ofp.MeterAdd, ofp.MeterModify, ofp.MeterDelete or MeterSelect); meters
// need OpenFlow 1.3 or later (OF13Up). Words are separated by commas,
// white space and (between a keyword and its value) '='; the flags kbps,
// pktps, burst and stats stand alone; the bands follow the first "band"
// (as in "band=" or "bands=") as type=drop|dscp_remark, rate, burst_size
// and prec_level words, each type starting a band. Errors carry
// ovs-ofctl's message.
func ParseMeterMod(s string, command int) (*ofp.MeterMod, error) {
	withFlags := command == ofp.MeterAdd || command == ofp.MeterModify
	if !withFlags && command != ofp.MeterDelete && command != MeterSelect {
		return nil, errf("unknown meter command %d", command)
	}
	mm := &ofp.MeterMod{}
	if command >= 0 {
		mm.Command = uint16(command)
	}
	var bandText string
	if withFlags {
		i := strings.Index(s, "band")
		if i < 0 {
			return nil, errf("must specify bands")
		}
		j := strings.IndexByte(s[i+1:], '=')
		if j < 0 {
			return nil, errf("must specify bands")
		}
		s, bandText = s[:i], s[i+1+j+1:]
	}
	words := strtok{s: s}
	for {
		name, ok := words.next("=, \t\r\n")
		if !ok {
			break
		}
		if flag, isFlag := meterFlagWords[name]; withFlags && isFlag {
			mm.Flags |= flag
			continue
		}
		value, ok := words.next(", \t\r\n")
		if !ok {
			return nil, errf("field %s missing value", name)
		}
		if name != "meter" {
			return nil, errf("unknown keyword %s", name)
		}
		id, err := parseMeterID(value)
		if err != nil {
			return nil, err
		}
		mm.MeterID = id
	}
	if mm.MeterID == 0 {
		return nil, errf("must specify 'meter'")
	}
	if !withFlags {
		return mm, nil
	}
	if mm.Flags == 0 {
		return nil, errf("meter must specify either 'kbps' or 'pktps'")
	}
	bands, err := parseMeterBands(bandText)
	if err != nil {
		return nil, err
	}
	for _, b := range bands {
		switch {
		case b.Type == ofp.MeterBandDSCPRemark && b.PrecLevel == 0:
			return nil, errf("'dscp_remark' band must have 'prec_level'")
		case b.Type != ofp.MeterBandDSCPRemark && b.PrecLevel != 0:
			return nil, errf("Only 'dscp_remark' band may have 'prec_level'")
		case b.Rate == 0:
			return nil, errf("band must have 'rate'")
		case mm.Flags&ofp.MeterFlagBurst != 0 && b.BurstSize == 0:
			return nil, errf("band must have 'burst_size' when 'burst' flag is set")
		case mm.Flags&ofp.MeterFlagBurst == 0 && b.BurstSize != 0:
			return nil, errf("band may have 'burst_size' only when 'burst' flag is set")
		}
	}
	mm.Bands = bands
	return mm, nil
}

var meterFlagWords = map[string]uint16{
	"kbps": ofp.MeterFlagKbps, "pktps": ofp.MeterFlagPktps, "burst": ofp.MeterFlagBurst, "stats": ofp.MeterFlagStats,
}

// parseMeterID parses a meter keyword's value: all, controller, slowpath
// or a number from 1 to ofp.MeterMax.
func parseMeterID(s string) (uint32, error) {
	switch s {
	case "all":
		return ofp.MeterAll, nil
	case "controller":
		return ofp.MeterController, nil
	case "slowpath":
		return ofp.MeterSlowpath, nil
	}
	id, err := strToU32(s)
	if err != nil {
		return 0, err
	}
	if id == 0 || id > ofp.MeterMax {
		return 0, errf("invalid value for meter")
	}
	return id, nil
}

// parseMeterBands parses the words after "band=".
func parseMeterBands(s string) ([]ofp.MeterBand, error) {
	var bands []ofp.MeterBand
	words := strtok{s: s}
	for {
		name, ok := words.next("=, \t\r\n")
		if !ok {
			break
		}
		value, ok := words.next(", \t\r\n")
		if !ok {
			return nil, errf("field %s missing value", name)
		}
		if name == "type" {
			var t uint16
			switch value {
			case "drop":
				t = ofp.MeterBandDrop
			case "dscp_remark":
				t = ofp.MeterBandDSCPRemark
			default:
				return nil, errf("field %s unknown value %s", name, value)
			}
			bands = append(bands, ofp.MeterBand{Type: t})
			continue
		}
		if len(bands) == 0 {
			return nil, errf("band must start with the 'type' keyword")
		}
		b := &bands[len(bands)-1]
		var err error
		switch name {
		case "rate":
			b.Rate, err = strToU32(value)
		case "burst_size":
			b.BurstSize, err = strToU32(value)
		case "prec_level":
			var n uint64
			n, err = strToUint(value, 8, "prec_level")
			b.PrecLevel = uint8(n)
		default:
			err = errf("unknown keyword %s", name)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(bands) == 0 {
		return nil, errf("meter must have bands")
	}
	return bands, nil
}

// strtok splits a string as C's strtok_r: each token starts after any run
// of delimiters and ends at the next delimiter, which is consumed.
type strtok struct{ s string }

func (t *strtok) next(delims string) (string, bool) {
	t.s = strings.TrimLeft(t.s, delims)
	if t.s == "" {
		return "", false
	}
	n := strings.IndexAny(t.s, delims)
	if n < 0 {
		tok := t.s
		t.s = ""
		return tok, true
	}
	tok := t.s[:n]
	t.s = t.s[n+1:]
	return tok, true
}

// FormatMeterID names a meter as ovs-ofctl prints it: all, controller,
// slowpath or the number.
func FormatMeterID(id uint32) string {
	switch id {
	case ofp.MeterAll:
		return "all"
	case ofp.MeterController:
		return "controller"
	case ofp.MeterSlowpath:
		return "slowpath"
	}
	return strconv.FormatUint(uint64(id), 10)
}

// FormatMeterMod prints mm as ovs-ofctl prints a meter mod after the
// message header: "ADD meter=1 kbps bands=" and a line per band.
func FormatMeterMod(mm *ofp.MeterMod) string {
	var b strings.Builder
	switch mm.Command {
	case ofp.MeterAdd:
		b.WriteString("ADD ")
	case ofp.MeterModify:
		b.WriteString("MOD ")
	case ofp.MeterDelete:
		b.WriteString("DEL ")
	default:
		b.WriteString("cmd:" + strconv.Itoa(int(mm.Command)) + " ")
	}
	formatMeter(&b, mm.MeterID, mm.Flags, mm.Bands)
	return b.String()
}

// FormatMeterConfig prints one meter as ovs-ofctl dump-meters does:
// "meter=1 kbps bands=" and a line per band.
func FormatMeterConfig(mc *ofp.MeterConfig) string {
	var b strings.Builder
	formatMeter(&b, mc.MeterID, mc.Flags, mc.Bands)
	return b.String()
}

var meterFlagNames = []struct {
	flag uint16
	name string
}{{ofp.MeterFlagKbps, "kbps"}, {ofp.MeterFlagPktps, "pktps"}, {ofp.MeterFlagBurst, "burst"}, {ofp.MeterFlagStats, "stats"}}

func formatMeter(b *strings.Builder, id uint32, flags uint16, bands []ofp.MeterBand) {
	b.WriteString("meter=" + FormatMeterID(id) + " ")
	rest := flags
	for _, f := range meterFlagNames {
		if flags&f.flag != 0 {
			b.WriteString(f.name + " ")
			rest &^= f.flag
		}
	}
	if rest != 0 {
		b.WriteString("flags:0x" + strconv.FormatUint(uint64(rest), 16) + " ")
	}
	b.WriteString("bands=")
	for _, mb := range bands {
		b.WriteString("\ntype=")
		switch mb.Type {
		case ofp.MeterBandDrop:
			b.WriteString("drop")
		case ofp.MeterBandDSCPRemark:
			b.WriteString("dscp_remark")
		default:
			b.WriteString(strconv.Itoa(int(mb.Type)))
		}
		b.WriteString(" rate=" + strconv.FormatUint(uint64(mb.Rate), 10))
		if flags&ofp.MeterFlagBurst != 0 {
			b.WriteString(" burst_size=" + strconv.FormatUint(uint64(mb.BurstSize), 10))
		}
		if mb.Type == ofp.MeterBandDSCPRemark {
			b.WriteString(" prec_level=" + strconv.Itoa(int(mb.PrecLevel)))
		}
	}
}
