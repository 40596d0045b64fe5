import Testing

@_spi(Kernel) @testable import Simulator

@Suite struct EventQueueTests {
  @Test func sameInstantEventsLeaveInInsertionOrder() {
    var q = EventQueue<String>()
    q.insert("late", at: VirtualTime(nanoseconds: 9))
    q.insert("b", at: VirtualTime(nanoseconds: 5))
    q.insert("a", at: VirtualTime(nanoseconds: 5))
    q.insert("c", at: VirtualTime(nanoseconds: 5))
    q.insert("early", at: VirtualTime(nanoseconds: 1))
    #expect(q.removeAll().map(\.event) == ["early", "b", "a", "c", "late"])
  }

  @Test(arguments: [1, 2, 3, 4, 5])
  func matchesASortedReferenceUnderRandomOperations(seed: UInt64) {
    var rng = SimRandom(seed: seed)
    var q = EventQueue<Int>()
    var reference: [(time: Int64, seq: UInt64, value: Int)] = []
    var popped: [Int] = []
    var expected: [Int] = []
    for step in 0..<3_000 {
      if rng.chance(3, outOf: 5) || reference.isEmpty {
        let t = rng.int(in: 0...50)  // many equal times
        let seq = q.insert(step, at: VirtualTime(nanoseconds: t))
        reference.append((t, seq, step))
      } else {
        popped.append(q.popMin()!.event)
        let i = reference.indices.min { (reference[$0].time, reference[$0].seq) < (reference[$1].time, reference[$1].seq) }!
        expected.append(reference.remove(at: i).value)
      }
      if step % 97 == 0 { q._checkInvariants() }
    }
    #expect(popped == expected)
    #expect(q.count == reference.count)
  }

  @Test func loopTimeNeverGoesBackwards() {
    var rng = SimRandom(seed: 8)
    var loop = EventLoop<Int>()
    for i in 0..<100 { loop.schedule(i, after: .microseconds(rng.int(in: 0...1_000))) }
    var last = VirtualTime.zero
    var handled = 0
    while let (time, value) = loop.next() {
      #expect(time >= last)
      #expect(loop.now == time)
      last = time
      handled += 1
      if value < 1_000 { loop.schedule(value + 100, after: .microseconds(rng.int(in: 0...1_000))) }
    }
    #expect(handled == loop.processedCount)
    #expect(loop.pendingCount == 0)
  }

  @Test func nextUntilLeavesLaterWorkAndReportsIt() {
    var loop = EventLoop<String>()
    loop.schedule("soon", after: .seconds(1))
    loop.schedule("later", after: .seconds(10))
    let limit = VirtualTime.zero + .seconds(5)
    #expect(loop.next(until: limit)?.event == "soon")
    #expect(loop.next(until: limit) == nil)
    #expect(loop.now == limit)
    let leftover = loop.drain()
    #expect(leftover.map(\.event) == ["later"])
    #expect(leftover.first?.time == VirtualTime.zero + .seconds(10))
  }
}
