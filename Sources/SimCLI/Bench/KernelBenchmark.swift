@_spi(Kernel) import Simulator

/// `sim-cli bench kernel`: events per second of a ping-pong workload on the kernel's
/// `EventLoop`, next to the same workload on a bare, hand-specialised heap loop written here,
/// at a given number of pending events.
///
/// Each handled event schedules exactly one more at `now + uniform(1µs…1ms)` drawn from a
/// `SimRandom`, so the queue stays at `pending` events. Both loops draw the same numbers.
enum KernelBenchmark {
  struct Result {
    var pending: Int
    var events: Int
    var eventsPerSecond: Double
    var bareEventsPerSecond: Double
    /// bare / kernel: 1.0 means no overhead; the target is ≤ 2.
    var slowdown: Double { bareEventsPerSecond / eventsPerSecond }
  }

  enum Ping {
    case ping(Int32)
    case pong(Int32)
  }

  /// Measures `trials` times and keeps the median of each loop.
  static func measure(pending: Int, events: Int, trials: Int) -> Result {
    var kernel: [Double] = []
    var bare: [Double] = []
    // Warm-up, then alternate so that neither loop always runs on a warmer machine.
    _ = runKernel(pending: pending, events: events / 10 + 1)
    _ = runBare(pending: pending, events: events / 10 + 1)
    for _ in 0..<trials {
      kernel.append(runKernel(pending: pending, events: events))
      bare.append(runBare(pending: pending, events: events))
    }
    return Result(pending: pending, events: events, eventsPerSecond: median(kernel), bareEventsPerSecond: median(bare))
  }

  static func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
  }

  /// Events per second on `EventLoop`.
  @inline(never)
  static func runKernel(pending: Int, events: Int) -> Double {
    var rng = SimRandom(seed: 7, stream: "bench-kernel")
    var loop = EventLoop<Ping>(minimumCapacity: pending + 1)
    for i in 0..<pending {
      loop.schedule(.ping(Int32(truncatingIfNeeded: i)), after: .nanoseconds(rng.int(in: 1_000...1_000_000)))
    }
    let clock = WallClock()
    var handled = 0
    var checksum: Int64 = 0
    while handled < events, let (time, event) = loop.next() {
      let delay = SimDuration.nanoseconds(rng.int(in: 1_000...1_000_000))
      switch event {
      case .ping(let n): loop.schedule(.pong(n), after: delay)
      case .pong(let n): loop.schedule(.ping(n), after: delay)
      }
      checksum &+= time.nanoseconds
      handled += 1
    }
    let seconds = clock.elapsedSeconds
    _blackHole(checksum)
    return Double(handled) / seconds
  }

  /// The same workload on a minimal heap of plain structs, specialised by hand: the yardstick.
  @inline(never)
  static func runBare(pending: Int, events: Int) -> Double {
    struct Entry {
      var time: Int64
      var sequence: UInt64
      var node: Int32
      var isPing: Bool
    }
    var rng = SimRandom(seed: 7, stream: "bench-kernel")
    var heap: [Entry] = []
    heap.reserveCapacity(pending + 1)
    var sequence: UInt64 = 0
    var now: Int64 = 0

    @inline(__always) func less(_ a: Entry, _ b: Entry) -> Bool {
      a.time < b.time || (a.time == b.time && a.sequence < b.sequence)
    }
    func push(_ e: Entry) {
      heap.append(e)
      var child = heap.count - 1
      while child > 0 {
        let parent = (child - 1) / 2
        if !less(heap[child], heap[parent]) { break }
        heap.swapAt(child, parent)
        child = parent
      }
    }
    func pop() -> Entry {
      let top = heap[0]
      let last = heap.removeLast()
      if !heap.isEmpty {
        heap[0] = last
        var parent = 0
        let n = heap.count
        while true {
          let left = 2 * parent + 1
          if left >= n { break }
          var best = left
          if left + 1 < n, less(heap[left + 1], heap[left]) { best = left + 1 }
          if !less(heap[best], heap[parent]) { break }
          heap.swapAt(parent, best)
          parent = best
        }
      }
      return top
    }

    for i in 0..<pending {
      push(Entry(time: rng.int(in: 1_000...1_000_000), sequence: sequence, node: Int32(truncatingIfNeeded: i), isPing: true))
      sequence += 1
    }
    let clock = WallClock()
    var handled = 0
    var checksum: Int64 = 0
    while handled < events, !heap.isEmpty {
      let e = pop()
      now = e.time
      let delay = rng.int(in: 1_000...1_000_000)
      push(Entry(time: now + delay, sequence: sequence, node: e.node, isPing: !e.isPing))
      sequence += 1
      checksum &+= now
      handled += 1
    }
    let seconds = clock.elapsedSeconds
    _blackHole(checksum)
    return Double(handled) / seconds
  }

  @inline(never)
  static func _blackHole(_ x: Int64) {
    if x == 42 { print("", terminator: "") }
  }
}
