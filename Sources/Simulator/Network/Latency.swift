/// How long one message takes in one direction.
public enum LatencyModel: Hashable, Sendable, CustomStringConvertible {
  /// Always the same.
  case fixed(SimDuration)
  /// Uniform over the closed range `low...high`.
  case uniform(SimDuration, SimDuration)
  /// `minimum` plus an exponential tail whose mean is `mean - minimum` (so the overall mean is
  /// `mean`). Long tails reorder messages more often than a uniform range.
  case exponential(minimum: SimDuration, mean: SimDuration)

  /// Draws one latency; never negative.
  @inlinable
  @_spi(Kernel) public func sample(_ rng: inout SimRandom) -> SimDuration {
    switch self {
    case .fixed(let d):
      return d.nanoseconds < 0 ? .zero : d
    case .uniform(let low, let high):
      let lo = Swift.max(0, Swift.min(low.nanoseconds, high.nanoseconds))
      let hi = Swift.max(0, Swift.max(low.nanoseconds, high.nanoseconds))
      return SimDuration(nanoseconds: rng.int(in: lo...hi))
    case .exponential(let minimum, let mean):
      let base = Swift.max(0, minimum.nanoseconds)
      let tailMean = Double(Swift.max(0, mean.nanoseconds - base))
      if tailMean == 0 { return SimDuration(nanoseconds: base) }
      let tail = rng.exponential(mean: tailMean)
      // Cap the tail at 50 means: keeps the value finite and far inside Int64.
      let capped = Swift.min(tail, tailMean * 50)
      return SimDuration(nanoseconds: base + Int64(capped))
    }
  }

  public var description: String {
    switch self {
    case .fixed(let d): "\(d)"
    case .uniform(let a, let b): "\(a)..\(b)"
    case .exponential(let minimum, let mean): "exp(min \(minimum), mean \(mean))"
    }
  }
}
