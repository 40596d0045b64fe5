import Testing

@_spi(Kernel) @testable import Simulator

@Suite struct NetworkTests {
  func pair(_ conditions: NetworkConditions = NetworkConditions()) -> (Network, NodeID, NodeID) {
    var net = Network(conditions: conditions)
    let a = net.addNode()
    let b = net.addNode()
    return (net, a, b)
  }

  @Test func anOfflineDeviceSendsAndReceivesNothing() {
    var (net, phone, server) = pair()
    var rng = SimRandom(seed: 1)
    net.setOnline(phone, false)
    #expect(net.send(from: phone, to: server, at: .zero, using: &rng).dropped == .senderOffline)
    #expect(net.send(from: server, to: phone, at: .zero, using: &rng).dropped == .receiverOffline)
    #expect(net.stats.droppedOffline == 2)
  }

  @Test func messagesInFlightToADeviceThatGoesOfflineAreDroppedEvenIfItComesBack() {
    var (net, phone, server) = pair()
    var rng = SimRandom(seed: 1)
    let t = net.send(from: server, to: phone, at: .zero, using: &rng)
    #expect(t.arrival != nil)
    net.setOnline(phone, false)
    net.setOnline(phone, true)
    let oldAccepted = net.accepts(t)
    #expect(!oldAccepted)
    let fresh = net.send(from: server, to: phone, at: .zero, using: &rng)
    let freshAccepted = net.accepts(fresh)
    #expect(freshAccepted)
  }

  @Test func aServerOutageDropsRequestsAndInFlightMessages() {
    var (net, phone, server) = pair()
    var rng = SimRandom(seed: 1)
    let inFlight = net.send(from: phone, to: server, at: .zero, using: &rng)
    net.setUp(server, false)
    let accepted = net.accepts(inFlight)
    #expect(!accepted)
    #expect(net.send(from: phone, to: server, at: .zero, using: &rng).dropped == .receiverDown)
    net.setUp(server, true)
    #expect(net.isReachable(server))
  }

  @Test func lossAndDuplicationFollowTheirProbabilities() {
    var (net, a, b) = pair(
      NetworkConditions(latency: .fixed(.milliseconds(10)), loss: Probability(10, outOf: 100), duplication: Probability(5, outOf: 100)))
    var rng = SimRandom(seed: 4)
    var lost = 0
    var duplicated = 0
    for _ in 0..<20_000 {
      let t = net.send(from: a, to: b, at: .zero, using: &rng)
      if t.dropped == .lost { lost += 1 }
      if t.duplicateArrival != nil { duplicated += 1 }
    }
    #expect(abs(lost - 2_000) < 200)
    #expect(abs(duplicated - 900) < 150)  // 5 % of the 18,000 that were not lost
  }

  @Test func independentDelaysReorderMessages() {
    var (net, a, b) = pair(NetworkConditions(latency: .uniform(.milliseconds(20), .milliseconds(300))))
    var rng = SimRandom(seed: 5)
    var arrivals: [VirtualTime] = []
    for i in 0..<100 {
      arrivals.append(net.send(from: a, to: b, at: VirtualTime.zero + .milliseconds(Int64(i)), using: &rng).arrival!)
    }
    #expect(arrivals != arrivals.sorted(), "some later message must overtake an earlier one")
    for (i, t) in arrivals.enumerated() {
      let sent = VirtualTime.zero + .milliseconds(Int64(i))
      #expect(t - sent >= .milliseconds(20) && t - sent <= .milliseconds(300))
    }
  }

  @Test func exponentialLatencyHasItsMinimumAndMean() {
    var rng = SimRandom(seed: 6)
    let model = LatencyModel.exponential(minimum: .milliseconds(10), mean: .milliseconds(60))
    var total: Int64 = 0
    for _ in 0..<20_000 {
      let d = model.sample(&rng)
      #expect(d >= .milliseconds(10))
      total += d.nanoseconds
    }
    let mean = total / 20_000
    #expect(abs(mean - 60_000_000) < 2_000_000)
  }
}
