/// The simulator's only source of randomness: xoshiro256** (Blackman & Vigna), seeded through
/// ``SplitMix64``.
///
/// Every draw the simulation makes comes from a `SimRandom` derived from the run's seed, so the
/// same seed gives the same run on every machine. Components draw from their own *streams*
/// (``init(seed:stream:index:)``), so adding a draw to the network does not reshuffle the
/// workload.
///
///     var network = SimRandom(seed: 42, stream: "network")
///     let delay = network.int(in: 20_000...300_000)   // uniform, unbiased
///     let lost = network.chance(1, outOf: 100)        // 1 %
///
/// Use the methods here (``below(_:)``, ``shuffle(_:)``, ``choose(from:)``), not the standard
/// library's `shuffled(using:)`/`randomElement(using:)`: their algorithms are not promised to stay
/// the same across Swift versions.
@frozen
@_spi(Kernel) public struct SimRandom: RandomNumberGenerator, Sendable {
  @usableFromInline var s0: UInt64
  @usableFromInline var s1: UInt64
  @usableFromInline var s2: UInt64
  @usableFromInline var s3: UInt64

  /// A generator whose whole state comes from `seed`.
  public init(seed: UInt64) {
    var sm = SplitMix64(seed: seed)
    s0 = sm.next()
    s1 = sm.next()
    s2 = sm.next()
    s3 = sm.next()
    if s0 | s1 | s2 | s3 == 0 { s0 = 1 }  // the all-zero state is a fixed point
  }

  /// An independent stream for one component (`"network"`, `"workload"`, a device's index).
  /// The same `(seed, stream, index)` always gives the same generator.
  public init(seed: UInt64, stream: String, index: UInt64 = 0) {
    var h = StableHasher()
    h.combine(stream)
    h.combine(index)
    var mix = SplitMix64(seed: seed ^ h.value)
    self.init(seed: mix.next())
  }

  /// A new generator split off this one; the parent's sequence advances by one draw.
  @inlinable
  public mutating func split() -> SimRandom {
    SimRandom(seed: next())
  }

  /// The next 64 random bits.
  @inlinable
  public mutating func next() -> UInt64 {
    let result = _rotl(s1 &* 5, 7) &* 9
    let t = s1 << 17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result
  }

  @inlinable @inline(__always)
  func _rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 &- k)) }

  /// A uniform value in `0..<bound`, without modulo bias (Lemire's multiply-and-reject).
  /// - Precondition: `bound > 0`.
  @inlinable
  public mutating func below(_ bound: UInt64) -> UInt64 {
    precondition(bound > 0, "SimRandom.below(0)")
    var product = next().multipliedFullWidth(by: bound)
    if product.low < bound {
      let threshold = (0 &- bound) % bound
      while product.low < threshold {
        product = next().multipliedFullWidth(by: bound)
      }
    }
    return product.high
  }

  /// A uniform integer in the closed range.
  @inlinable
  public mutating func int(in range: ClosedRange<Int64>) -> Int64 {
    let span = UInt64(bitPattern: range.upperBound &- range.lowerBound)
    if span == .max { return Int64(bitPattern: next()) }
    return range.lowerBound &+ Int64(bitPattern: below(span &+ 1))
  }

  /// A uniform integer in the half-open range.
  /// - Precondition: the range is not empty.
  @inlinable
  public mutating func int(in range: Range<Int>) -> Int {
    precondition(!range.isEmpty, "SimRandom.int(in:) with an empty range")
    return range.lowerBound + Int(below(UInt64(range.count)))
  }

  /// `true` with probability `numerator / denominator`, decided with integers only.
  @inlinable
  public mutating func chance(_ numerator: UInt64, outOf denominator: UInt64) -> Bool {
    if numerator == 0 { return false }
    if numerator >= denominator { return true }
    return below(denominator) < numerator
  }

  /// `true` with the given probability.
  @inlinable
  public mutating func chance(_ p: Probability) -> Bool {
    chance(p.numerator, outOf: p.denominator)
  }

  /// A uniform double in `[0, 1)` with 53 random bits.
  @inlinable
  public mutating func unitInterval() -> Double {
    Double(next() >> 11) * 0x1.0p-53
  }

  /// Shuffles in place (Fisher–Yates, drawing with ``below(_:)``).
  @inlinable
  public mutating func shuffle<T>(_ array: inout [T]) {
    guard array.count > 1 else { return }
    var i = array.count - 1
    while i > 0 {
      let j = Int(below(UInt64(i + 1)))
      if i != j { array.swapAt(i, j) }
      i -= 1
    }
  }

  /// A uniformly chosen element, or `nil` for an empty collection.
  @inlinable
  public mutating func choose<C: Collection>(from collection: C) -> C.Element? {
    if collection.isEmpty { return nil }
    let offset = Int(below(UInt64(collection.count)))
    return collection[collection.index(collection.startIndex, offsetBy: offset)]
  }

  /// `count` distinct indices of `0..<population`, in increasing order (Floyd's algorithm
  /// without a hash set: the result is kept sorted, so it is deterministic and O(k²) for small k).
  public mutating func sampleIndices(_ count: Int, from population: Int) -> [Int] {
    precondition(count >= 0 && count <= population, "sampleIndices: count out of range")
    var chosen: [Int] = []
    chosen.reserveCapacity(count)
    var j = population - count
    while j < population {
      let t = Int(below(UInt64(j + 1)))
      if !_insertSorted(&chosen, t) { _ = _insertSorted(&chosen, j) }
      j += 1
    }
    return chosen
  }

  /// Inserts `value` keeping order; `false` if it was already present.
  func _insertSorted(_ array: inout [Int], _ value: Int) -> Bool {
    var lo = 0
    var hi = array.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if array[mid] < value { lo = mid + 1 } else { hi = mid }
    }
    if lo < array.count, array[lo] == value { return false }
    array.insert(value, at: lo)
    return true
  }

  /// An exponentially distributed value with the given mean, computed with a natural logarithm
  /// written here from IEEE-754 basic operations only, so the result is bit-identical on every
  /// platform (the C library's `log` is not).
  public mutating func exponential(mean: Double) -> Double {
    // 1 - u lies in (0, 1]; -ln of it is >= 0.
    let u = 1.0 - unitInterval()
    return -mean * StableMath.log(u)
  }
}

/// A probability as an exact fraction, so that Bernoulli draws use integers only.
@frozen
public struct Probability: Hashable, Sendable, CustomStringConvertible {
  /// The numerator of the reduced fraction; never above ``denominator``.
  public var numerator: UInt64
  /// The denominator of the reduced fraction; never 0.
  public var denominator: UInt64

  /// `numerator / denominator`, clamped to `[0, 1]` and reduced, so that equal probabilities
  /// are equal values and draw the same numbers (`5/100` and `1/20` both become `1/20`).
  public init(_ numerator: UInt64, outOf denominator: UInt64) {
    precondition(denominator > 0, "Probability with a zero denominator")
    let n = min(numerator, denominator)
    var a = n
    var b = denominator
    while b != 0 { (a, b) = (b, a % b) }
    self.numerator = n / a
    self.denominator = denominator / a
  }

  /// Probability 0: the event never happens, and deciding it draws no random number.
  public static let never = Probability(0, outOf: 1)
  /// Probability 1: the event always happens, and deciding it draws no random number.
  public static let always = Probability(1, outOf: 1)

  /// Parses `1%`, `0.5%`, `100%`, `0%` (at most six decimals).
  public static func parsePercent(_ text: String) -> Probability? {
    guard text.hasSuffix("%") else { return nil }
    let number = text.dropLast()
    let parts = number.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, let wholePart = parts.first, !wholePart.isEmpty,
      wholePart.allSatisfy({ $0.isASCII && $0.isNumber }), wholePart.count <= 3
    else { return nil }
    var numerator = UInt64(wholePart)!
    var denominator: UInt64 = 100
    if parts.count == 2 {
      let fraction = parts[1]
      guard !fraction.isEmpty, fraction.count <= 6, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
      for ch in fraction {
        numerator = numerator * 10 + UInt64(String(ch))!
        denominator *= 10
      }
    }
    guard numerator <= denominator else { return nil }
    return Probability(numerator, outOf: denominator)
  }

  /// Whether this is probability 0.
  public var isZero: Bool { numerator == 0 }

  /// `1%`, `0.5%`.
  public var description: String {
    // percent = numerator * 100 / denominator, printed with up to six decimals.
    let scaled = numerator * 100
    let whole = scaled / denominator
    var rest = scaled % denominator
    var digits = ""
    var n = 0
    while rest != 0, n < 6 {
      rest *= 10
      digits.append(Character(String(rest / denominator)))
      rest %= denominator
      n += 1
    }
    return digits.isEmpty ? "\(whole)%" : "\(whole).\(digits)%"
  }
}
