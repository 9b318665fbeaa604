package packet

import "encoding/binary"

// Checksum returns the Internet checksum (RFC 1071) of b folded with an
// initial partial sum, not complemented.
func ChecksumPartial(b []byte, initial uint32) uint32 {
	sum := uint64(initial)
	for len(b) >= 8 {
		sum += uint64(binary.BigEndian.Uint32(b)) + uint64(binary.BigEndian.Uint32(b[4:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		sum += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	for sum>>16 != 0 {
		sum = (sum & 0xffff) + (sum >> 16)
	}
	return uint32(sum)
}

// Checksum returns the complemented Internet checksum of b.
func Checksum(b []byte) uint16 {
	return ^uint16(ChecksumPartial(b, 0))
}

// Fold folds a 32-bit partial sum to 16 bits and complements it.
func Fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = (sum & 0xffff) + (sum >> 16)
	}
	return ^uint16(sum)
}

// UpdateChecksum16 returns checksum csum adjusted for a 16-bit word
// changing from old to new (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m')).
func UpdateChecksum16(csum, old, new uint16) uint16 {
	sum := uint32(^csum) + uint32(^old) + uint32(new)
	sum = (sum & 0xffff) + (sum >> 16)
	sum = (sum & 0xffff) + (sum >> 16)
	return ^uint16(sum)
}

// UpdateChecksum32 adjusts csum for a 32-bit value changing from old to new.
func UpdateChecksum32(csum uint16, old, new uint32) uint16 {
	csum = UpdateChecksum16(csum, uint16(old>>16), uint16(new>>16))
	return UpdateChecksum16(csum, uint16(old), uint16(new))
}

// UpdateChecksumBytes adjusts csum for an even-length, 2-byte aligned
// field changing from old to new (IPv6 addresses, MACs in ND options).
func UpdateChecksumBytes(csum uint16, old, new []byte) uint16 {
	for i := 0; i+1 < len(old) && i+1 < len(new); i += 2 {
		csum = UpdateChecksum16(csum, binary.BigEndian.Uint16(old[i:]), binary.BigEndian.Uint16(new[i:]))
	}
	return csum
}

// PseudoHeaderIPv4 returns the partial sum of the IPv4 pseudo-header.
func PseudoHeaderIPv4(src, dst uint32, proto uint8, l4len int) uint32 {
	return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + uint32(proto) + uint32(l4len)
}

// PseudoHeaderIPv6 returns the partial sum of the IPv6 pseudo-header.
func PseudoHeaderIPv6(src, dst []byte, proto uint8, l4len int) uint32 {
	s := ChecksumPartial(src, 0)
	s = ChecksumPartial(dst, s)
	return s + uint32(proto) + uint32(l4len>>16) + uint32(l4len&0xffff)
}
