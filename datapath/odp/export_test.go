package odp

// OVSLines exposes the Open vSwitch reference lines to the external test
// package (fuzz seeds).
var OVSLines = ovsLinesForFuzz
