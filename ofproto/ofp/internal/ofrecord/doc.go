// Package ofrecord is a recording OpenFlow listener for capturing what
// real clients (ovs-ofctl) send. It answers just enough — hello, echo,
// features, get-config, barrier, empty stats replies — for a client to
// proceed, and records every message it receives and sends
// (testdata/capture.sh drives it with Debian's ovs-ofctl). It is test
// tooling: it imports ofproto/ofp and nothing else from the project, and
// nothing outside tests imports it.
package ofrecord
