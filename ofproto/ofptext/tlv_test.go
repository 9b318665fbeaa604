package ofptext

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

func TestParseTLVMapsReadsNumbersAsOVSScan(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []ofp.TLVMap
	}{
		{"", nil},
		{"{class=0xffff,type=0,len=4}->tun_metadata0", []ofp.TLVMap{{OptClass: 0xffff, OptLen: 4}}},
		{"{class=0xffff,type=0,len=4}->tun_metadata0,{class=0x0102,type=0x80,len=8}->tun_metadata5",
			[]ofp.TLVMap{{OptClass: 0xffff, OptLen: 4}, {OptClass: 0x102, OptType: 0x80, OptLen: 8, Index: 5}}},
		// The comma between mappings is optional, and one may lead.
		{",{class=1,type=2,len=4}->tun_metadata3{class=1,type=3,len=8}->tun_metadata4",
			[]ofp.TLVMap{{OptClass: 1, OptType: 2, OptLen: 4, Index: 3}, {OptClass: 1, OptType: 3, OptLen: 8, Index: 4}}},
		// Octal, blanks before numbers, signs, and wrap-around to the
		// field's width.
		{"{class= 010,type=+0X1f,len=\t-4}->tun_metadata 0x10001", []ofp.TLVMap{{OptClass: 8, OptType: 0x1f, OptLen: 252, Index: 1}}},
		{"{class=-1,type=0x1ff,len=300}->tun_metadata99999999999999999999",
			[]ofp.TLVMap{{OptClass: 0xffff, OptType: 0xff, OptLen: 44, Index: uint16(uint64(99999999999999999999%(1<<64)) & 0xffff)}}},
	} {
		got, err := ParseTLVMaps(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseTLVMaps(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseTLVMapsRejectsWhatOVSOfctlRejects(t *testing.T) {
	for _, in := range []string{
		"bogus",
		",",
		"{class=0xffff,type=0,len=4}->tun_metadata0,",
		"{class=0xffff,type=0,len=4}->tun_metadata0,,{class=1,type=0,len=4}->tun_metadata1",
		"{class=0xffff, type=0,len=4}->tun_metadata0",
		"{class=0xffff,type=0,len=4} ->tun_metadata0",
		"{class=0x,type=0,len=4}->tun_metadata0",
		"{class=08,type=0,len=4}->tun_metadata0",
		"{class=1,type=0,len=4}->tun_metadata",
		"{class=1,type=0,len=4}->tun_metadata1 ",
		"{class=1,type=0,len=4}->tun_metadata1x",
		"{class=1,type=0,len=4}",
		"{type=0,class=1,len=4}->tun_metadata0",
		"{class=1,type=0,len=4}->tun_metadata-",
	} {
		if got, err := ParseTLVMaps(in); !errors.Is(err, ErrInvalidTLVMapping) || err.Error() != "invalid tlv mapping" {
			t.Errorf("ParseTLVMaps(%q) = %+v, %v; want invalid tlv mapping", in, got, err)
		}
	}
}

// The expected texts are Debian ovs-ofctl 3.1's ofp-print and
// dump-tlv-map output after the header line.
func TestFormatTLVTablePrintsLikeOVSOfctl(t *testing.T) {
	maps := []ofp.TLVMap{{OptClass: 0xffff, OptLen: 4}, {OptClass: 0x102, OptType: 0x80, OptLen: 8, Index: 5}}
	const table = " mapping table:\n" +
		"  class  type  length  match field\n" +
		" ------  ----  ------  --------------\n" +
		" 0xffff     0       4  tun_metadata0\n" +
		"  0x102  0x80       8  tun_metadata5\n"
	for _, tc := range []struct {
		name, got, want string
	}{
		{"add", FormatTLVTableMod(&ofp.TLVTableMod{Command: ofp.TLVAdd, Mappings: maps}), "\n ADD" + table},
		{"delete", FormatTLVTableMod(&ofp.TLVTableMod{Command: ofp.TLVDelete, Mappings: maps}), "\n DEL" + table},
		{"clear ignores mappings", FormatTLVTableMod(&ofp.TLVTableMod{Command: ofp.TLVClear, Mappings: maps}), "\n CLEAR\n"},
		{"empty add", FormatTLVTableMod(&ofp.TLVTableMod{Command: ofp.TLVAdd}),
			"\n ADD mapping table:\n  class  type  length  match field\n ------  ----  ------  --------------\n"},
		{"reply", FormatTLVTableReply(&ofp.TLVTableReply{MaxOptionSpace: 256, MaxFields: 64, Mappings: maps}),
			"\n max option space=256 max fields=64\n allocated option space=12\n\n" + table},
		{"empty reply", FormatTLVTableReply(&ofp.TLVTableReply{MaxOptionSpace: 256, MaxFields: 64}),
			"\n max option space=256 max fields=64\n allocated option space=0\n\n" +
				" mapping table:\n  class  type  length  match field\n ------  ----  ------  --------------\n"},
		{"largest option", FormatTLVTableReply(&ofp.TLVTableReply{MaxOptionSpace: 256, MaxFields: 64,
			Mappings: []ofp.TLVMap{{OptClass: 0xfffe, OptLen: 124, Index: 10}, {OptClass: 1, OptType: 1, OptLen: 124, Index: 63}}}),
			"\n max option space=256 max fields=64\n allocated option space=248\n\n" +
				" mapping table:\n  class  type  length  match field\n ------  ----  ------  --------------\n" +
				" 0xfffe     0     124  tun_metadata10\n    0x1   0x1     124  tun_metadata63\n"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
}

// FuzzParseTLVMaps checks that no input panics and that parsed mappings,
// printed back in the canonical syntax, parse to the same mappings.
func FuzzParseTLVMaps(f *testing.F) {
	for _, s := range []string{
		"",
		"{class=0xffff,type=0,len=4}->tun_metadata0",
		"{class=0xffff,type=0,len=4}->tun_metadata0,{class=0x0102,type=0x80,len=8}->tun_metadata5",
		",{class=1,type=2,len=4}->tun_metadata3{class=1,type=3,len=8}->tun_metadata4",
		"{class= 010,type=+0X1f,len=\t-4}->tun_metadata 0x10001",
		"{class=0x,type=0,len=4}->tun_metadata0",
		"{class=1,type=0,len=4}->tun_metadata0,",
		"bogus",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		maps, err := ParseTLVMaps(s)
		if err != nil {
			return
		}
		var b strings.Builder
		for i, m := range maps {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "{class=%#x,type=%d,len=%d}->tun_metadata%d", m.OptClass, m.OptType, m.OptLen, m.Index)
		}
		again, err := ParseTLVMaps(b.String())
		if err != nil || !reflect.DeepEqual(again, maps) {
			t.Fatalf("%q: parsed %+v; reparsed %+v, %v", s, maps, again, err)
		}
		FormatTLVTableMod(&ofp.TLVTableMod{Mappings: maps})
	})
}
