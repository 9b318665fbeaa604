package ofswitch

import "github.com/gvs-project/gvs/ofproto/xlate"

// SetMirrors installs the bridge's port mirrors (the OVSDB Mirror rows,
// see xlate/mirror.go); a change revalidates every megaflow. It returns
// the names of mirrors left out because the bridge already has
// xlate.MaxMirrors.
func (b *Bridge) SetMirrors(ms []xlate.Mirror) (dropped []string) {
	changed, dropped := b.xl.SetMirrors(ms)
	if changed {
		b.up.Changed()
	}
	return dropped
}

// creditMirrors counts packets sent to port mirrors (Mirror.statistics).
func creditMirrors(uses []xlate.MirrorUse, packets, bytes uint64) {
	for _, u := range uses {
		u.X.CreditMirrors(u.Mask, packets, bytes)
	}
}

// MirrorStats returns the packets and bytes sent to the mirror whose ID
// (Mirror row UUID) is id; false when the bridge has no such mirror.
func (b *Bridge) MirrorStats(id string) (packets, bytes uint64, ok bool) {
	return b.xl.MirrorStats(id)
}
