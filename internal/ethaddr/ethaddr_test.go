package ethaddr

import "testing"

func TestScanReadsOneOrTwoDigitBytesAndStringWritesTwo(t *testing.T) {
	for in, want := range map[string]string{
		"0:1:2:3:4:5": "00:01:02:03:04:05", "AA:bb:0c:0D:e:ff": "aa:bb:0c:0d:0e:ff",
	} {
		m, ok := Scan(in)
		if !ok || String(m) != want {
			t.Errorf("%s: %v %s", in, ok, String(m))
		}
	}
	for _, bad := range []string{"", "1:2:3:4:5", "1:2:3:4:5:6:7", "100:2:3:4:5:6", "x:2:3:4:5:6", "1::3:4:5:6"} {
		if _, ok := Scan(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}
