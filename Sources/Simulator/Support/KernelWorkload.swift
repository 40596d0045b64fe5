/// A seeded random workload that exercises every part of the kernel — the event loop, the
/// network with latency, loss, duplication and offline nodes, device clocks with skew, drift
/// and jumps, PRNG sub-streams, and the trace recorder — and nothing of the sync domain.
///
/// It exists to prove determinism: the same seed must give the same trace hash in every run and
/// every process (the test suite runs it in-process and through `sim-cli selftest`), and
/// different seeds must give different hashes.
package enum KernelWorkload {
  enum Event {
    case send(from: NodeID, to: NodeID, message: Int64)
    case deliver(Transmission, message: Int64, duplicate: Bool)
    case toggle(NodeID)
    case jump(NodeID)
  }

  static let sendKind = TraceKind(code: 1, name: "send", fields: ("msg", "to", "dropped"))
  static let deliverKind = TraceKind(code: 2, name: "deliver", fields: ("msg", "from", "clock"))
  static let dropKind = TraceKind(code: 3, name: "drop-in-flight", fields: ("msg", "from", "-"))
  static let toggleKind = TraceKind(code: 4, name: "toggle", fields: ("online", "-", "-"))
  static let jumpKind = TraceKind(code: 5, name: "clock-jump", fields: ("by", "clock", "-"))

  /// Runs the workload until `messages` messages have been sent and everything has settled.
  package static func run(seed: UInt64, nodes: Int = 4, messages: Int = 2_000, mode: TraceRecorder.Mode = .hashOnly) -> TraceRecorder {
    var setup = SimRandom(seed: seed, stream: "setup")
    var network = Network(
      conditions: NetworkConditions(
        latency: .exponential(minimum: .milliseconds(5), mean: .milliseconds(80)),
        loss: Probability(3, outOf: 100),
        duplication: Probability(1, outOf: 50)))
    var clocks: [DeviceClock] = []
    for _ in 0..<nodes {
      _ = network.addNode()
      clocks.append(DeviceClock(skew: .milliseconds(setup.int(in: -5_000...5_000)), driftPPM: setup.int(in: -100...100)))
    }
    var traffic = SimRandom(seed: seed, stream: "traffic")
    var faults = SimRandom(seed: seed, stream: "faults")
    var wire = SimRandom(seed: seed, stream: "network")
    var trace = TraceRecorder(mode: mode)
    var loop = EventLoop<Event>()
    // Keyed lookups only: the result must not depend on the dictionary's (per-process) order.
    var firstSeen: [Int64: VirtualTime] = [:]

    var sent: Int64 = 0
    func scheduleSend() {
      guard sent < messages else { return }
      let from = NodeID(index: traffic.int(in: 0..<nodes))
      var to = NodeID(index: traffic.int(in: 0..<(nodes - 1)))
      if to >= from { to = NodeID(index: to.index + 1) }
      loop.schedule(.send(from: from, to: to, message: sent), after: .microseconds(traffic.int(in: 100...20_000)))
      sent += 1
    }
    for _ in 0..<min(nodes * 2, messages) { scheduleSend() }
    loop.schedule(.toggle(NodeID(index: faults.int(in: 0..<nodes))), after: .milliseconds(faults.int(in: 10...500)))
    loop.schedule(.jump(NodeID(index: faults.int(in: 0..<nodes))), after: .milliseconds(faults.int(in: 10...500)))

    while let (now, event) = loop.next() {
      switch event {
      case .send(let from, let to, let message):
        let t = network.send(from: from, to: to, at: now, using: &wire)
        trace.record(sendKind, at: now, node: from.rawValue, message, Int64(to.rawValue), Int64(t.dropped?.rawValue ?? 255))
        if let arrival = t.arrival { loop.schedule(.deliver(t, message: message, duplicate: false), at: arrival) }
        if let arrival = t.duplicateArrival { loop.schedule(.deliver(t, message: message, duplicate: true), at: arrival) }
        scheduleSend()
      case .deliver(let t, let message, _):
        if network.accepts(t) {
          if firstSeen[message] == nil { firstSeen[message] = now }
          let reading = clocks[t.to.index].read(at: now)
          trace.record(deliverKind, at: now, node: t.to.rawValue, message, Int64(t.from.rawValue), reading.nanoseconds)
        } else {
          trace.record(dropKind, at: now, node: t.to.rawValue, message, Int64(t.from.rawValue))
        }
      case .toggle(let node):
        network.setOnline(node, !network.isOnline(node))
        trace.record(toggleKind, at: now, node: node.rawValue, network.isOnline(node) ? 1 : 0)
        if sent < messages || !network.isOnline(node) {
          loop.schedule(.toggle(NodeID(index: faults.int(in: 0..<nodes))), after: .milliseconds(faults.int(in: 10...500)))
        }
      case .jump(let node):
        let by = SimDuration.milliseconds(faults.int(in: -2_000...2_000))
        clocks[node.index].jump(by: by)
        trace.record(jumpKind, at: now, node: node.rawValue, by.nanoseconds, clocks[node.index].read(at: now).nanoseconds)
        if sent < messages {
          loop.schedule(.jump(NodeID(index: faults.int(in: 0..<nodes))), after: .milliseconds(faults.int(in: 100...2_000)))
        }
      }
    }
    return trace
  }
}
