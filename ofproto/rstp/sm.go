package rstp

// The state machines of 802.1D-2004 clause 17. Each machine's state 0
// is "not begun": its BEGIN state is entered on the next run. run
// executes every machine of every port until none moves.

// Machine states.
const (
	_ = iota
	prxDiscard
	prxReceive
)

const (
	_ = iota
	ppmCheckingRSTP
	ppmSelectingSTP
	ppmSensing
)

const (
	_ = iota
	bdmEdge
	bdmNotEdge
)

const (
	_ = iota
	ptxInit
	ptxIdle
)

const (
	_ = iota
	pimDisabled
	pimAged
	pimUpdate
	pimCurrent
)

const (
	_ = iota
	prtDisabledPort
	prtRootPort
	prtDesignatedPort
	prtAlternatePort
	prtBlockPort
	prtDisablePort
)

const (
	_ = iota
	pstDiscarding
	pstLearning
	pstForwarding
)

const (
	_ = iota
	tcmInactive
	tcmLearning
	tcmActive
)

// Per-port derived values (17.20).
func (p *Port) fwdDelay() int { return int(p.designatedTimes.FwdDelay) }
func (p *Port) helloT() int   { return int(p.designatedTimes.Hello) }
func (p *Port) maxAgeT() int  { return int(p.designatedTimes.MaxAge) }
func (p *Port) forwardDelay() int {
	if p.sendRSTP {
		return p.helloT()
	}
	return p.fwdDelay()
}
func (p *Port) edgeDelay() int {
	if p.operP2P {
		return migrateTime
	}
	return p.maxAgeT()
}

func (b *Bridge) allSynced() bool {
	for _, q := range b.ports {
		if !q.selected || q.role != q.selectedRole || !(q.synced || q.role == RoleRoot) {
			return false
		}
	}
	return true
}

func (p *Port) reRooted() bool {
	for _, q := range p.b.ports {
		if q != p && q.rrWhile != 0 {
			return false
		}
	}
	return true
}

func (b *Bridge) run() {
	for i := 0; i < 1000; i++ {
		moved := b.prs()
		for _, p := range b.ports {
			moved = p.prxStep() || moved
			moved = p.ppmStep() || moved
			moved = p.bdmStep() || moved
			moved = p.ptxStep() || moved
			moved = p.pimStep() || moved
			moved = p.prtStep() || moved
			moved = p.pstStep() || moved
			moved = p.tcmStep() || moved
		}
		if !moved {
			break
		}
	}
	for _, p := range b.ports {
		st := Discarding
		switch {
		case p.forwarding:
			st = Forwarding
		case p.learning:
			st = Learning
		}
		if State(p.state.Load()) != st {
			p.state.Store(uint32(st))
		}
		if st != p.reported {
			p.changed = true
			p.reported = st
		}
	}
}

// Port receive (17.23).
func (p *Port) prxStep() bool {
	switch {
	case p.prx == 0 || (p.rcvdBPDU || p.edgeDelayWhile != migrateTime) && !p.portEnabled:
		p.prx = prxDiscard
		p.rcvdBPDU, p.rcvdRSTP, p.rcvdSTP = false, false, false
		p.rcvdMsg = false
		p.edgeDelayWhile = migrateTime
		return true
	case p.prx == prxDiscard && p.rcvdBPDU && p.portEnabled,
		p.prx == prxReceive && p.rcvdBPDU && p.portEnabled && !p.rcvdMsg:
		p.prx = prxReceive
		p.updtBPDUVersion()
		p.operEdge, p.rcvdBPDU = false, false
		p.rcvdMsg = true
		p.edgeDelayWhile = migrateTime
		return true
	}
	return false
}

func (p *Port) updtBPDUVersion() {
	switch p.msg.Type {
	case TypeRST:
		p.rcvdRSTP = true
	case TypeConfig, TypeTCN:
		p.rcvdSTP = true
	}
}

// Port protocol migration (17.24).
func (p *Port) ppmStep() bool {
	b := p.b
	switch {
	case p.ppm == 0:
		p.enterCheckingRSTP()
		return true
	case p.ppm == ppmCheckingRSTP && p.mdelayWhile == 0:
		p.ppm = ppmSensing
		p.rcvdRSTP, p.rcvdSTP = false, false
		return true
	case p.ppm == ppmCheckingRSTP && !p.portEnabled && p.mdelayWhile != migrateTime:
		p.enterCheckingRSTP()
		return true
	case p.ppm == ppmSelectingSTP && (p.mdelayWhile == 0 || !p.portEnabled || p.mcheck):
		p.ppm = ppmSensing
		p.rcvdRSTP, p.rcvdSTP = false, false
		return true
	case p.ppm == ppmSensing && (!p.portEnabled || p.mcheck || b.rstpVersion() && !p.sendRSTP && p.rcvdRSTP):
		p.enterCheckingRSTP()
		return true
	case p.ppm == ppmSensing && p.sendRSTP && p.rcvdSTP:
		p.ppm = ppmSelectingSTP
		p.sendRSTP = false
		p.mdelayWhile = migrateTime
		return true
	}
	return false
}

func (p *Port) enterCheckingRSTP() {
	p.ppm = ppmCheckingRSTP
	p.mcheck = false
	p.sendRSTP = p.b.rstpVersion()
	p.mdelayWhile = migrateTime
}

// Bridge detection (17.25).
func (p *Port) bdmStep() bool {
	switch {
	case p.bdm == 0 && p.adminEdge:
		p.bdm, p.operEdge = bdmEdge, true
		return true
	case p.bdm == 0:
		p.bdm, p.operEdge = bdmNotEdge, false
		return true
	case p.bdm == bdmEdge && (!p.portEnabled && !p.adminEdge || !p.operEdge):
		p.bdm, p.operEdge = bdmNotEdge, false
		return true
	case p.bdm == bdmNotEdge && (!p.portEnabled && p.adminEdge ||
		p.edgeDelayWhile == 0 && p.autoEdge && p.sendRSTP && p.proposing):
		p.bdm, p.operEdge = bdmEdge, true
		return true
	}
	return false
}

// Port transmit (17.26).
func (p *Port) ptxStep() bool {
	b := p.b
	switch {
	case p.ptx == 0:
		p.ptx = ptxInit
		p.newInfo, p.txCount = true, 0
		return true
	case p.ptx == ptxInit:
		p.ptx = ptxIdle
		p.helloWhen = p.helloT()
		return true
	}
	if !(p.selected && !p.updtInfo) {
		return false
	}
	switch {
	case p.helloWhen == 0:
		p.newInfo = p.newInfo || p.role == RoleDesignated || p.role == RoleRoot && p.tcWhile != 0
	case !p.sendRSTP && p.newInfo && p.role == RoleDesignated && p.txCount < b.txHold:
		p.newInfo = false
		p.txConfig()
		p.txCount++
		p.tcAck = false
	case !p.sendRSTP && p.newInfo && p.role == RoleRoot && p.txCount < b.txHold:
		p.newInfo = false
		p.txTCN()
		p.txCount++
	case p.sendRSTP && p.newInfo && p.txCount < b.txHold:
		p.newInfo = false
		p.txRSTP()
		p.txCount++
		p.tcAck = false
	default:
		return false
	}
	p.helloWhen = p.helloT() // back to IDLE
	return true
}

func (p *Port) sendBPDU(d *BPDU) {
	if !p.portEnabled {
		return
	}
	p.b.outbox = append(p.b.outbox, outFrame{aux: p.aux, bpdu: d.Encode()})
	p.tx++
}

func (p *Port) bpduBody(d *BPDU) {
	d.RootID, d.RootPathCost = p.designatedPrio.RootID, p.designatedPrio.RootPathCost
	d.BridgeID, d.PortID = p.designatedPrio.DesignatedBridge, p.designatedPrio.DesignatedPort
	d.MessageAge = p.designatedTimes.MessageAge << 8
	d.MaxAge = p.designatedTimes.MaxAge << 8
	d.HelloTime = p.designatedTimes.Hello << 8
	d.FwdDelay = p.designatedTimes.FwdDelay << 8
}

func (p *Port) txConfig() {
	d := BPDU{Type: TypeConfig}
	p.bpduBody(&d)
	if p.tcWhile != 0 {
		d.Flags |= FlagTC
	}
	if p.tcAck {
		d.Flags |= FlagTCAck
	}
	p.sendBPDU(&d)
}

func (p *Port) txTCN() {
	d := BPDU{Type: TypeTCN}
	p.sendBPDU(&d)
}

func (p *Port) txRSTP() {
	d := BPDU{Type: TypeRST, Version: 2}
	p.bpduBody(&d)
	switch p.role {
	case RoleRoot:
		d.Flags |= bpduRoleRoot << roleShift
	case RoleDesignated:
		d.Flags |= bpduRoleDesig << roleShift
	case RoleAlternate, RoleBackup:
		d.Flags |= bpduRoleAltBak << roleShift
	}
	if p.agree {
		d.Flags |= FlagAgreement
	}
	if p.proposing {
		d.Flags |= FlagProposal
	}
	if p.tcWhile != 0 {
		d.Flags |= FlagTC
	}
	if p.learning {
		d.Flags |= FlagLearning
	}
	if p.forwarding {
		d.Flags |= FlagForwarding
	}
	p.sendBPDU(&d)
}

// Port information (17.27).
func (p *Port) pimStep() bool {
	switch {
	case p.pim == 0 || !p.portEnabled && p.info != infoDisabled || p.pim == pimDisabled && p.rcvdMsg:
		p.pim = pimDisabled
		p.rcvdMsg = false
		p.proposing, p.proposed, p.agree, p.agreed = false, false, false, false
		p.rcvdInfoWhile = 0
		p.info = infoDisabled
		p.reselect, p.selected = true, false
		return true
	case p.pim == pimDisabled && p.portEnabled:
		p.enterAged()
		return true
	case (p.pim == pimAged || p.pim == pimCurrent) && p.selected && p.updtInfo:
		p.pim = pimUpdate
		p.proposing, p.proposed = false, false
		p.agreed = p.agreed && p.betterOrSameInfo(infoMine)
		p.synced = p.synced && p.agreed
		p.portPrio, p.portTimes = p.designatedPrio, p.designatedTimes
		p.updtInfo = false
		p.info = infoMine
		p.newInfo = true
		p.pim = pimCurrent
		return true
	case p.pim == pimCurrent && p.info == infoReceived && p.rcvdInfoWhile == 0 && !p.updtInfo && !p.rcvdMsg:
		p.enterAged()
		return true
	case p.pim == pimCurrent && p.rcvdMsg && !p.updtInfo:
		p.receive()
		return true
	}
	return false
}

func (p *Port) enterAged() {
	p.pim = pimAged
	p.info = infoAged
	p.reselect, p.selected = true, false
}

func (p *Port) msgRole() int { return int(p.msg.Flags&FlagRoleMask) >> roleShift }

// receive is RECEIVE and the state it leads to.
func (p *Port) receive() {
	p.rcvd = p.rcvInfo()
	switch p.rcvd {
	case superiorDesignated:
		p.agreed, p.proposing = false, false
		p.recordProposal()
		p.setTcFlags()
		p.agree = p.agree && p.betterOrSameInfo(infoReceived)
		p.portPrio = p.msgPrio
		p.portTimes = p.msgTimes
		p.updtRcvdInfoWhile()
		p.info = infoReceived
		p.reselect, p.selected = true, false
	case repeatedDesignated:
		p.recordProposal()
		p.setTcFlags()
		p.updtRcvdInfoWhile()
	case inferiorDesignated:
		p.recordDispute()
	case inferiorRootAlternate:
		p.recordAgreement()
		p.setTcFlags()
	}
	p.rcvdMsg = false
	p.pim = pimCurrent
}

func (p *Port) rcvInfo() rcvdInfo {
	m := &p.msg
	if m.Type == TypeTCN {
		p.setTcFlags()
		return otherInfo
	}
	p.msgPrio = vector{RootID: m.RootID, RootPathCost: m.RootPathCost, DesignatedBridge: m.BridgeID,
		DesignatedPort: m.PortID, BridgePort: p.portID}
	p.msgTimes = times{FwdDelay: m.FwdDelay >> 8, Hello: m.HelloTime >> 8, MaxAge: m.MaxAge >> 8, MessageAge: m.MessageAge >> 8}
	role := bpduRoleDesig
	if m.Type == TypeRST {
		role = p.msgRole()
	}
	switch role {
	case bpduRoleDesig:
		c := p.msgPrio.cmp(p.portPrio)
		sameDesignated := p.msgPrio.DesignatedBridge&macBits == p.portPrio.DesignatedBridge&macBits &&
			p.msgPrio.DesignatedPort&0xfff == p.portPrio.DesignatedPort&0xfff
		switch {
		case c < 0 || c != 0 && sameDesignated:
			return superiorDesignated
		case c == 0 && p.msgTimes != p.portTimes:
			return superiorDesignated
		case c == 0:
			return repeatedDesignated
		}
		return inferiorDesignated
	case bpduRoleRoot, bpduRoleAltBak:
		if p.msgPrio.cmp(p.portPrio) >= 0 {
			return inferiorRootAlternate
		}
	}
	return otherInfo
}

func (p *Port) recordProposal() {
	if p.msg.Type == TypeRST && p.msgRole() == bpduRoleDesig && p.msg.Flags&FlagProposal != 0 {
		p.proposed = true
	}
}

func (p *Port) setTcFlags() {
	switch p.msg.Type {
	case TypeTCN:
		p.rcvdTcn = true
	default:
		if p.msg.Flags&FlagTC != 0 {
			p.rcvdTc = true
		}
		if p.msg.Flags&FlagTCAck != 0 {
			p.rcvdTcAck = true
		}
	}
}

func (p *Port) recordDispute() {
	if p.msg.Type == TypeRST && p.msg.Flags&FlagLearning != 0 {
		p.disputed, p.agreed = true, false
	}
}

func (p *Port) recordAgreement() {
	if p.b.rstpVersion() && p.operP2P && p.msg.Type == TypeRST && p.msg.Flags&FlagAgreement != 0 {
		p.agreed, p.proposing = true, false
	} else {
		p.agreed = false
	}
}

func (p *Port) updtRcvdInfoWhile() {
	if p.portTimes.MessageAge+1 <= p.portTimes.MaxAge {
		p.rcvdInfoWhile = 3 * int(p.portTimes.Hello)
	} else {
		p.rcvdInfoWhile = 0
	}
}

func (p *Port) betterOrSameInfo(n infoIs) bool {
	return n == infoReceived && p.info == infoReceived && p.msgPrio.cmp(p.portPrio) <= 0 ||
		n == infoMine && p.info == infoMine && p.designatedPrio.cmp(p.portPrio) <= 0
}

// Port role selection (17.28), for the whole bridge.
func (b *Bridge) prs() bool {
	if b.prsState == 0 {
		for _, p := range b.ports {
			p.selectedRole = RoleDisabled
		}
		b.prsState = 1
		b.selectRoles()
		return true
	}
	for _, p := range b.ports {
		if p.reselect {
			b.selectRoles()
			return true
		}
	}
	return false
}

func (b *Bridge) selectRoles() {
	for _, p := range b.ports {
		p.reselect = false
	}
	// updtRolesTree
	best := b.bridgePriority
	bestTimes := b.bridgeTimes
	var root *Port
	for _, p := range b.ports {
		if p.info != infoReceived || p.portPrio.DesignatedBridge&macBits == b.address {
			continue
		}
		v := p.portPrio
		v.RootPathCost += p.pathCost
		v.BridgePort = p.portID
		if c := v.cmp(best); c < 0 || c == 0 && root != nil && v.BridgePort < best.BridgePort {
			best, root = v, p
			bestTimes = p.portTimes
			bestTimes.MessageAge++
		}
	}
	b.rootPrio = best
	b.rootTimes = bestTimes
	b.rootPortID = 0
	if root != nil {
		b.rootPortID = root.portID
	} else {
		b.rootPrio.BridgePort = 0
	}
	for _, p := range b.ports {
		p.designatedPrio = vector{RootID: best.RootID, RootPathCost: best.RootPathCost, DesignatedBridge: b.bridgeID,
			DesignatedPort: p.portID, BridgePort: p.portID}
		p.designatedTimes = b.rootTimes
		p.designatedTimes.Hello = b.bridgeTimes.Hello
		switch p.info {
		case infoDisabled:
			p.selectedRole = RoleDisabled
		case infoAged:
			p.selectedRole, p.updtInfo = RoleDesignated, true
		case infoMine:
			p.selectedRole = RoleDesignated
			if p.portPrio != p.designatedPrio || p.portTimes != b.rootTimes {
				p.updtInfo = true
			}
		case infoReceived:
			switch {
			case p == root:
				p.selectedRole, p.updtInfo = RoleRoot, false
			case p.designatedPrio.cmp(p.portPrio) >= 0:
				if p.portPrio.DesignatedBridge&macBits != b.address {
					p.selectedRole = RoleAlternate
				} else {
					p.selectedRole = RoleBackup
				}
				p.updtInfo = false
			default:
				p.selectedRole, p.updtInfo = RoleDesignated, true
			}
		}
	}
	// setSelectedTree
	for _, p := range b.ports {
		if p.reselect {
			return
		}
	}
	for _, p := range b.ports {
		p.selected = true
	}
}

// Port role transitions (17.29).
func (p *Port) prtStep() bool {
	b := p.b
	if p.prt == 0 {
		p.role = RoleDisabled
		p.learn, p.forward = false, false
		p.synced = false
		p.sync, p.reRoot = true, true
		p.rrWhile = p.fwdDelay()
		p.fdWhile = p.maxAgeT()
		p.rbWhile = 0
		p.prt = prtDisablePort
		p.role = p.selectedRole
		return true
	}
	if !(p.selected && !p.updtInfo) {
		return false
	}
	if p.role != p.selectedRole {
		switch p.selectedRole {
		case RoleDisabled:
			p.prt = prtDisablePort
			p.role = RoleDisabled
			p.learn, p.forward = false, false
		case RoleRoot:
			p.prt = prtRootPort
			p.role = RoleRoot
			p.rrWhile = p.fwdDelay()
		case RoleDesignated:
			p.prt = prtDesignatedPort
			p.role = RoleDesignated
		case RoleAlternate, RoleBackup:
			p.prt = prtBlockPort
			p.role = p.selectedRole
			p.learn, p.forward = false, false
		}
		return true
	}
	switch p.prt {
	case prtDisablePort:
		if !p.learning && !p.forwarding {
			p.prt = prtDisabledPort
			p.enterDisabledPort()
			return true
		}
	case prtDisabledPort:
		if p.fdWhile != p.maxAgeT() || p.sync || p.reRoot || !p.synced {
			p.enterDisabledPort()
			return true
		}
	case prtRootPort:
		return p.rootTransitions(b)
	case prtDesignatedPort:
		return p.designatedTransitions(b)
	case prtBlockPort:
		if !p.learning && !p.forwarding {
			p.prt = prtAlternatePort
			p.enterAlternatePort()
			return true
		}
	case prtAlternatePort:
		return p.alternateTransitions(b)
	}
	return false
}

func (p *Port) enterDisabledPort() {
	p.fdWhile = p.maxAgeT()
	p.synced = true
	p.rrWhile = 0
	p.sync, p.reRoot = false, false
}

func (p *Port) enterAlternatePort() {
	p.fdWhile = p.forwardDelay()
	p.synced = true
	p.rrWhile = 0
	p.sync, p.reRoot = false, false
}

func (b *Bridge) setSyncTree() {
	for _, q := range b.ports {
		q.sync = true
	}
}

func (b *Bridge) setReRootTree() {
	for _, q := range b.ports {
		q.reRoot = true
	}
}

func (p *Port) rootTransitions(b *Bridge) bool {
	switch {
	case p.proposed && !p.agree:
		b.setSyncTree()
		p.proposed = false
	case b.allSynced() && !p.agree || p.proposed && p.agree:
		p.proposed, p.sync = false, false
		p.agree = true
		p.newInfo = true
	case !p.forward && !p.reRoot:
		b.setReRootTree()
	case (p.fdWhile == 0 || p.reRooted() && p.rbWhile == 0 && b.rstpVersion()) && p.learn && !p.forward:
		p.fdWhile = 0
		p.forward = true
	case (p.fdWhile == 0 || p.reRooted() && p.rbWhile == 0 && b.rstpVersion()) && !p.learn:
		p.fdWhile = p.forwardDelay()
		p.learn = true
	case p.reRoot && p.forward:
		p.reRoot = false
	case p.rrWhile != p.fwdDelay():
	default:
		return false
	}
	p.rrWhile = p.fwdDelay() // back in ROOT_PORT
	return true
}

func (p *Port) designatedTransitions(b *Bridge) bool {
	switch {
	case !p.forward && !p.agreed && !p.proposing && !p.operEdge:
		p.proposing = true
		p.edgeDelayWhile = p.edgeDelay()
		p.newInfo = true
	case b.allSynced() && (p.proposed || !p.agree):
		p.proposed, p.sync = false, false
		p.agree = true
		p.newInfo = true
	case !p.learning && !p.forwarding && !p.synced || p.agreed && !p.synced || p.operEdge && !p.synced || p.sync && p.synced:
		p.rrWhile = 0
		p.synced = true
		p.sync = false
	case p.rrWhile == 0 && p.reRoot:
		p.reRoot = false
	case (p.sync && !p.synced || p.reRoot && p.rrWhile != 0 || p.disputed) && !p.operEdge && (p.learn || p.forward):
		p.learn, p.forward, p.disputed = false, false, false
		p.fdWhile = p.forwardDelay()
	case (p.fdWhile == 0 || p.agreed || p.operEdge) && (p.rrWhile == 0 || !p.reRoot) && !p.sync && !p.learn:
		p.learn = true
		p.fdWhile = p.forwardDelay()
	case (p.fdWhile == 0 || p.agreed || p.operEdge) && (p.rrWhile == 0 || !p.reRoot) && !p.sync && p.learn && !p.forward:
		p.forward = true
		p.fdWhile = 0
		p.agreed = p.sendRSTP
	default:
		return false
	}
	return true
}

func (p *Port) alternateTransitions(b *Bridge) bool {
	switch {
	case p.proposed && !p.agree:
		b.setSyncTree()
		p.proposed = false
	case b.allSynced() && !p.agree || p.proposed && p.agree:
		p.proposed = false
		p.agree = true
		p.newInfo = true
	case p.role == RoleBackup && p.rbWhile != 2*p.helloT():
		p.rbWhile = 2 * p.helloT()
	case p.fdWhile != p.forwardDelay() || p.sync || p.reRoot || !p.synced:
	default:
		return false
	}
	p.enterAlternatePort() // back in ALTERNATE_PORT
	return true
}

// Port state transitions (17.30).
func (p *Port) pstStep() bool {
	switch {
	case p.pst == 0:
		p.pst = pstDiscarding
		p.learning, p.forwarding = false, false
		return true
	case p.pst == pstDiscarding && p.learn:
		p.pst, p.learning = pstLearning, true
		return true
	case p.pst == pstLearning && !p.learn:
		p.pst, p.learning, p.forwarding = pstDiscarding, false, false
		return true
	case p.pst == pstLearning && p.forward:
		p.pst, p.forwarding = pstForwarding, true
		return true
	case p.pst == pstForwarding && !p.forward:
		p.pst, p.learning, p.forwarding = pstDiscarding, false, false
		return true
	}
	return false
}

// Topology change (17.31).
func (p *Port) tcmStep() bool {
	rootOrDesig := p.role == RoleRoot || p.role == RoleDesignated
	switch {
	case p.tcm == 0:
		p.tcm = tcmInactive
		p.fdbFlush = true
		p.tcWhile = 0
		p.tcAck = false
		return true
	case p.tcm == tcmInactive && p.learn && !p.fdbFlush:
		p.enterTcmLearning()
		return true
	case p.tcm == tcmLearning && rootOrDesig && p.forward && !p.operEdge:
		// DETECTED
		p.newTcWhile()
		p.setTcPropTree()
		p.newInfo = true
		p.tcm = tcmActive
		return true
	case p.tcm == tcmLearning && (p.rcvdTc || p.rcvdTcn || p.rcvdTcAck || p.tcProp):
		p.enterTcmLearning()
		return true
	case p.tcm == tcmLearning && !rootOrDesig && !(p.learn || p.learning) && !(p.rcvdTc || p.rcvdTcn || p.rcvdTcAck || p.tcProp):
		p.tcm = tcmInactive
		p.fdbFlush = true
		p.tcWhile = 0
		p.tcAck = false
		return true
	case p.tcm == tcmActive && (!rootOrDesig || p.operEdge):
		p.enterTcmLearning()
		return true
	case p.tcm == tcmActive && (p.rcvdTcn || p.rcvdTc):
		if p.rcvdTcn {
			p.newTcWhile() // NOTIFIED_TCN
		}
		p.rcvdTcn, p.rcvdTc = false, false // NOTIFIED_TC
		if p.role == RoleDesignated {
			p.tcAck = true
		}
		p.setTcPropTree()
		return true
	case p.tcm == tcmActive && p.tcProp && !p.operEdge:
		// PROPAGATING
		p.newTcWhile()
		p.fdbFlush = true
		p.tcProp = false
		return true
	case p.tcm == tcmActive && p.rcvdTcAck:
		// ACKNOWLEDGED
		p.tcWhile = 0
		p.rcvdTcAck = false
		return true
	}
	return false
}

func (p *Port) enterTcmLearning() {
	p.tcm = tcmLearning
	p.rcvdTc, p.rcvdTcn, p.rcvdTcAck = false, false, false
	p.tcProp = false
}

func (p *Port) newTcWhile() {
	if p.tcWhile != 0 {
		return
	}
	if p.sendRSTP {
		p.tcWhile = p.helloT() + 1
		p.newInfo = true
	} else {
		p.tcWhile = int(p.b.rootTimes.MaxAge) + int(p.b.rootTimes.FwdDelay)
	}
}

func (p *Port) setTcPropTree() {
	for _, q := range p.b.ports {
		if q != p {
			q.tcProp = true
		}
	}
}
