package afxdp

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The bpf_attr variants used here. Pointers are unsafe.Pointer fields
// (64 bits on the 64-bit platforms gvs runs on), so the memory they name
// stays alive and in place while the kernel reads it.
type mapCreateAttr struct {
	mapType, keySize, valueSize, maxEntries, mapFlags, innerMapFD, numaNode uint32
	name                                                                    [16]byte
	_                                                                       [44]byte
}

type mapElemAttr struct {
	mapFD uint32
	_     uint32
	key   unsafe.Pointer
	value unsafe.Pointer
	flags uint64
}

type progLoadAttr struct {
	progType, insnCnt  uint32
	insns, license     unsafe.Pointer
	logLevel, logSize  uint32
	logBuf             unsafe.Pointer
	kernVersion, flags uint32
	name               [16]byte
	ifindex            uint32
	expectedAttachType uint32
	_                  [64]byte
}

type linkCreateAttr struct {
	progFD, targetIfindex, attachType, flags uint32
	_                                        [32]byte
}

func bpfMapCreate(a *mapCreateAttr) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(a)), unsafe.Sizeof(*a))
	return sysResult(r, e)
}

func bpfMapUpdate(a *mapElemAttr) error {
	_, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_UPDATE_ELEM, uintptr(unsafe.Pointer(a)), unsafe.Sizeof(*a))
	if e != 0 {
		return e
	}
	return nil
}

func bpfProgLoad(a *progLoadAttr) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_LOAD, uintptr(unsafe.Pointer(a)), unsafe.Sizeof(*a))
	return sysResult(r, e)
}

func bpfLinkCreate(a *linkCreateAttr) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_LINK_CREATE, uintptr(unsafe.Pointer(a)), unsafe.Sizeof(*a))
	return sysResult(r, e)
}

func sysResult(r uintptr, e unix.Errno) (int, error) {
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// newXSKMap creates an XSKMAP of n entries (u32 queue index to socket).
func newXSKMap(n int) (int, error) {
	a := &mapCreateAttr{mapType: unix.BPF_MAP_TYPE_XSKMAP, keySize: 4, valueSize: 4, maxEntries: uint32(n)}
	copy(a.name[:], "gvs_xsks")
	fd, err := bpfMapCreate(a)
	if err != nil {
		return -1, fmt.Errorf("create XSKMAP: %w", err)
	}
	return fd, nil
}

// setXSK puts socket fd at index q of map m.
func setXSK(m, q, fd int) error {
	kv := &[2]uint32{uint32(q), uint32(fd)}
	if err := bpfMapUpdate(&mapElemAttr{mapFD: uint32(m), key: unsafe.Pointer(&kv[0]), value: unsafe.Pointer(&kv[1])}); err != nil {
		return fmt.Errorf("XSKMAP update: %w", err)
	}
	return nil
}

// Instruction encoding (linux/bpf.h, struct bpf_insn).
const (
	opLdxMemW   = 0x61 // BPF_LDX | BPF_MEM | BPF_W
	opLdImm64   = 0x18 // BPF_LD | BPF_IMM | BPF_DW
	opMov64Imm  = 0xb7 // BPF_ALU64 | BPF_MOV | BPF_K
	opCall      = 0x85 // BPF_JMP | BPF_CALL
	opExit      = 0x95 // BPF_JMP | BPF_EXIT
	fnRedirMap  = 51   // bpf_redirect_map
	xdpPass     = 2    // XDP_PASS
	mdRxQueueID = 16   // offsetof(struct xdp_md, rx_queue_index)
)

// insn encodes one instruction (little-endian hosts: dst in the low
// nibble of the register byte).
func insn(op, dst, src uint8, off int16, imm int32) uint64 {
	return uint64(op) | uint64(dst&0xf)<<8 | uint64(src&0xf)<<12 | uint64(uint16(off))<<16 | uint64(uint32(imm))<<32
}

// redirectProgram is the XDP program: redirect the frame to the socket at
// its rx queue's index of map m, or pass it to the stack if there is
// none (the low bits of bpf_redirect_map's flags are the action on a
// miss).
func redirectProgram(m int) []uint64 {
	return []uint64{
		insn(opLdxMemW, 2, 1, mdRxQueueID, 0),                   // r2 = ctx->rx_queue_index
		insn(opLdImm64, 1, unix.BPF_PSEUDO_MAP_FD, 0, int32(m)), // r1 = map
		0,                                  // upper half of the 64-bit immediate
		insn(opMov64Imm, 3, 0, 0, xdpPass), // r3 = XDP_PASS
		insn(opCall, 0, 0, 0, fnRedirMap),  // r0 = bpf_redirect_map(r1, r2, r3)
		insn(opExit, 0, 0, 0, 0),           // return r0
	}
}

// loadProgram loads the redirect program for map m and returns its
// descriptor; the verifier's log is in the error if it refuses.
func loadProgram(m int) (int, error) {
	prog := redirectProgram(m)
	license := []byte("Dual BSD/GPL\x00")
	a := &progLoadAttr{progType: unix.BPF_PROG_TYPE_XDP, insnCnt: uint32(len(prog)), insns: unsafe.Pointer(&prog[0]),
		license: unsafe.Pointer(&license[0]), expectedAttachType: unix.BPF_XDP}
	copy(a.name[:], "gvs_xsk_redir")
	fd, err := bpfProgLoad(a)
	if err == nil {
		return fd, nil
	}
	// Load again with the verifier's log for the error.
	log := make([]byte, 4096)
	a.logLevel, a.logSize, a.logBuf = 1, uint32(len(log)), unsafe.Pointer(&log[0])
	if fd, err2 := bpfProgLoad(a); err2 == nil {
		return fd, nil
	}
	return -1, fmt.Errorf("load XDP program: %w (%s)", err, unix.ByteSliceToString(log))
}

// attachProgram attaches program p to interface ifindex in the mode of
// xdpFlags (XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE) through a BPF link
// and returns the link's descriptor: closing it detaches the program.
func attachProgram(p, ifindex int, xdpFlags uint32) (int, error) {
	fd, err := bpfLinkCreate(&linkCreateAttr{progFD: uint32(p), targetIfindex: uint32(ifindex), attachType: unix.BPF_XDP, flags: xdpFlags})
	if err != nil {
		return -1, fmt.Errorf("attach XDP program: %w", err)
	}
	return fd, nil
}
