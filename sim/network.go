package sim

import "time"

// Network is the simulated network between a World's hosts, to shape and
// break: latencies, datagram loss, duplication and reordering, bandwidth,
// partitions and resets. Hosts are named as given to World.Host. Every
// setting applies from the moment it is made, in virtual time; the random
// draws it implies (a latency, a loss) come from the run's seed.
type Network struct{ w *World }

// SetLatency sets the one-way latency of every link without one of its
// own: uniform in [min, max], drawn per segment or datagram.
func (n *Network) SetLatency(min, max time.Duration) { n.w.net.SetLatency(min, max) }

// SetLinkLatency sets the latency between hosts a and b, both ways (a ==
// b: the host's loopback).
func (n *Network) SetLinkLatency(a, b string, min, max time.Duration) {
	n.w.net.SetLinkLatency(a, b, min, max)
}

// SetLoss sets the probability that a datagram is lost; TCP stays
// reliable.
func (n *Network) SetLoss(p float64) { n.w.net.SetLoss(p) }

// SetDuplicate sets the probability that a datagram arrives twice.
func (n *Network) SetDuplicate(p float64) { n.w.net.SetDuplicate(p) }

// SetReorder sets the probability that a datagram may overtake those sent
// before it; TCP stays ordered.
func (n *Network) SetReorder(p float64) { n.w.net.SetReorder(p) }

// SetBandwidth limits each direction of every link to bytesPerSecond (0:
// no limit).
func (n *Network) SetBandwidth(bytesPerSecond int64) { n.w.net.SetBandwidth(bytesPerSecond) }

// SetConnectTimeout sets how long a TCP connect waits for an answer (into
// a partition, to a host that is down) before it fails with ETIMEDOUT.
func (n *Network) SetConnectTimeout(d time.Duration) { n.w.net.SetConnectTimeout(d) }

// SetTCPTimeout sets how long a TCP connection keeps sending segments that
// a partition or a down host holds back before it gives up with ETIMEDOUT;
// 0, the default, waits for the heal however long.
func (n *Network) SetTCPTimeout(d time.Duration) { n.w.net.SetTCPTimeout(d) }

// Partition cuts every link between a host of groupA and one of groupB,
// both ways: datagrams across it are lost, TCP segments held (as
// retransmissions) until the heal or the TCP timeout, and a connect's SYN
// is sent again (after 1 s, 2 s, 4 s, ...) until the heal or the connect
// timeout.
func (n *Network) Partition(groupA, groupB []string) {
	n.w.record("-", "partition", fmtGroups(groupA, groupB))
	n.w.net.Partition(groupA, groupB)
}

// Heal removes every partition; held segments go at once.
func (n *Network) Heal() {
	n.w.record("-", "heal", "all")
	n.w.net.Heal()
}

// HealLink removes the partition between hosts a and b.
func (n *Network) HealLink(a, b string) { n.w.net.HealLink(a, b) }

// ResetConnections resets every TCP connection between hosts a and b: both
// ends see ECONNRESET.
func (n *Network) ResetConnections(a, b string) { n.w.net.ResetConnections(a, b) }

// fmtGroups renders a partition for the trace.
func fmtGroups(a, b []string) string {
	s := "["
	for i, x := range a {
		if i > 0 {
			s += " "
		}
		s += x
	}
	s += "] | ["
	for i, x := range b {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s + "]"
}
