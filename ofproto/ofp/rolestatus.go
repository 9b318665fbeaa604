package ofp

import "encoding/binary"

// RoleStatus is OFPT_ROLE_STATUS (OpenFlow 1.4+) and ONFT_ROLE_STATUS
// (the OpenFlow 1.3 extension): a controller's role changed. Role is
// OpenFlow's (RoleMaster, RoleSlave, ...).
type RoleStatus struct {
	Role         uint32
	Reason       uint8 // OFPCRR_*: 0 primary request, 1 config, 2 experimenter
	GenerationID uint64
}

// Role status reasons (OFPCRR_*).
const (
	RoleReasonPrimaryRequest = 0
	RoleReasonConfig         = 1
	RoleReasonExperimenter   = 2
)

func decodeRoleStatus(r *reader, _ uint8, _ Raw) (Message, error) {
	m := &RoleStatus{Role: r.u32(), Reason: r.u8()}
	r.skip(3)
	m.GenerationID = r.u64()
	r.rest() // properties (experimenter only) are ignored
	return m, nil
}

// RawFor fails before OpenFlow 1.3, which has no role status.
func (*RoleStatus) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawONFT13_ROLE_STATUS, RawOFPT14_ROLE_STATUS)
}

func (m *RoleStatus) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, m.Role)
	b = append(b, m.Reason, 0, 0, 0)
	return binary.BigEndian.AppendUint64(b, m.GenerationID), nil
}

func init() {
	decoders[RawONFT13_ROLE_STATUS] = decodeRoleStatus
	decoders[RawOFPT14_ROLE_STATUS] = decodeRoleStatus
}
