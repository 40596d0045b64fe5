@_spi(Kernel) import Simulator

/// Where a moment goes on the picture: linear within busy stretches, and every idle gap longer
/// than ``breakAfter`` drawn as a fixed-width break, so ten days offline neither squash the rest
/// nor vanish. Positions are integers in tenths of a pixel.
struct TimeAxis {
  struct Segment {
    var t0: Int64
    var t1: Int64
    var x0: Int
    var x1: Int
    var isBreak: Bool
  }

  static let breakAfter = SimDuration.milliseconds(800)
  static let breakWidth = 400

  private(set) var segments: [Segment] = []
  let start: Int
  /// Tenths of a pixel per second in the linear stretches.
  let scale: Int64

  /// - Parameters:
  ///   - times: every moment something is drawn at (any order, repeats allowed).
  ///   - start: x of the first moment.
  ///   - target: the width the busy stretches should take, if the scale limits allow.
  init(times: [VirtualTime], start: Int, target: Int) {
    self.start = start
    let sorted = Self.unique(times.map(\.nanoseconds))
    var busy: Int64 = 0
    for (a, b) in zip(sorted, sorted.dropFirst()) where b - a <= Self.breakAfter.nanoseconds { busy += b - a }
    let wanted = busy > 0 ? Int64(target) * 1_000_000_000 / busy : 4_000
    scale = min(max(wanted, 400), 4_000)
    var x = start
    for (a, b) in zip(sorted, sorted.dropFirst()) {
      let isBreak = b - a > Self.breakAfter.nanoseconds
      let w = isBreak ? Self.breakWidth : Int((b - a) * scale / 1_000_000_000)
      segments.append(Segment(t0: a, t1: b, x0: x, x1: x + w, isBreak: isBreak))
      x += w
    }
    if segments.isEmpty, let only = sorted.first {
      segments.append(Segment(t0: only, t1: only, x0: start, x1: start, isBreak: false))
    }
  }

  static func unique(_ values: [Int64]) -> [Int64] {
    var out: [Int64] = []
    for v in values.sorted() where out.last != v { out.append(v) }
    return out
  }

  var end: Int { segments.last?.x1 ?? start }
  var breaks: [Segment] { segments.filter(\.isBreak) }

  /// The x of a moment (clamped to the axis).
  func x(_ t: VirtualTime) -> Int {
    let ns = t.nanoseconds
    guard let first = segments.first else { return start }
    if ns <= first.t0 { return first.x0 }
    var lo = 0
    var hi = segments.count - 1
    while lo < hi {
      let mid = (lo + hi) / 2
      if segments[mid].t1 < ns { lo = mid + 1 } else { hi = mid }
    }
    let s = segments[lo]
    if ns >= s.t1 { return s.x1 }
    if s.t1 == s.t0 { return s.x0 }
    return s.x0 + Int(Int64(s.x1 - s.x0) * (ns - s.t0) / (s.t1 - s.t0))
  }

  /// Busy stretches between breaks, as (first moment, last moment).
  var clusters: [(Int64, Int64)] {
    var out: [(Int64, Int64)] = []
    guard let first = segments.first else { return out }
    var a = first.t0
    var b = first.t0
    for s in segments {
      if s.isBreak {
        out.append((a, b))
        a = s.t1
        b = s.t1
      } else {
        b = s.t1
      }
    }
    out.append((a, b))
    return out
  }

  /// Tick moments: the start of each busy stretch (`true`), then round steps at least 70 px
  /// apart (`false`). The drawing drops those whose labels would touch.
  var ticks: [(Int64, Bool)] {
    let steps: [Int64] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000].map { $0 * 1_000_000 }
    let step = steps.first { $0 * scale / 1_000_000_000 >= 700 } ?? 60_000_000_000
    var out: [(Int64, Bool)] = []
    for (a, b) in clusters {
      out.append((a, true))
      var t = (a / step + 1) * step
      while t <= b {
        out.append((t, false))
        t += step
      }
    }
    return out
  }
}

/// Times and durations for people: `3s`, `1.4s`, `2m 1.1s`, `40d 1m`.
enum TimeText {
  /// A moment since the start, exact to the millisecond.
  static func moment(_ ns: Int64) -> String {
    guard ns != 0 else { return "0s" }
    let negative = ns < 0
    var rest = ns.magnitude
    let day: UInt64 = 86_400_000_000_000
    let hour: UInt64 = 3_600_000_000_000
    let minute: UInt64 = 60_000_000_000
    var parts: [String] = []
    if rest >= day {
      parts.append("\(rest / day)d")
      rest %= day
    }
    if rest >= hour {
      parts.append("\(rest / hour)h")
      rest %= hour
    }
    if rest >= minute {
      parts.append("\(rest / minute)m")
      rest %= minute
    }
    if rest > 0 || parts.isEmpty { parts.append(seconds(rest)) }
    return (negative ? "-" : "") + parts.joined(separator: " ")
  }

  /// `1.25s`: up to three decimals, no trailing zeros; below a millisecond in µs.
  static func seconds(_ ns: UInt64) -> String {
    if ns > 0, ns < 1_000_000 { return "\(ns / 1_000)µs" }
    let whole = ns / 1_000_000_000
    let ms = (ns % 1_000_000_000) / 1_000_000
    guard ms > 0 else { return "\(whole)s" }
    var digits = String(ms)
    digits = String(repeating: "0", count: 3 - digits.count) + digits
    while digits.hasSuffix("0") { digits.removeLast() }
    return "\(whole).\(digits)s"
  }

  /// A gap, rounded to what matters at its size: `+59.6s`, `+5m 2s`, `+40d`.
  static func gap(_ ns: Int64) -> String {
    let units: [(Int64, Int64)] = [(86_400_000_000_000, 3_600_000_000_000), (3_600_000_000_000, 60_000_000_000), (60_000_000_000, 1_000_000_000)]
    for (size, round) in units where ns >= size {
      return "+" + moment((ns + round / 2) / round * round)
    }
    return "+" + moment((ns + 50_000_000) / 100_000_000 * 100_000_000)
  }
}
