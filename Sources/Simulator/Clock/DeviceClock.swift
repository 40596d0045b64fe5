/// A device's wall clock as a function of true (simulated) time: a constant skew, a drift in
/// parts per million, and the sum of the jumps applied so far (a user changing the time, NTP
/// correcting it).
///
///     var clock = DeviceClock(skew: .seconds(2), driftPPM: 40)
///     clock.read(at: VirtualTime.zero + .seconds(100))   // 102.004s
///     clock.jump(by: .seconds(-1))
///
/// The reading is computed with integers only. A clock may read a negative time (skewed
/// backwards) and may go backwards after a negative jump; that is what real clocks do, and
/// what timestamp-based policies must survive.
@frozen
@_spi(Kernel) public struct DeviceClock: Hashable, Sendable {
  /// Offset from true time at time zero.
  public var skew: SimDuration
  /// Rate error: the clock gains `driftPPM` microseconds per true second (negative: loses).
  public var driftPPM: Int64
  /// The sum of all jumps so far.
  public private(set) var jumped: SimDuration = .zero

  /// A clock `skew` ahead of true time (behind, if negative) that gains `driftPPM` microseconds
  /// per true second, with no jumps yet.
  @inlinable
  public init(skew: SimDuration = .zero, driftPPM: Int64 = 0) {
    self.skew = skew
    self.driftPPM = driftPPM
  }

  /// A perfect clock.
  public static let perfect = DeviceClock()

  /// The device's reading at true time `t`.
  @inlinable
  public func read(at t: VirtualTime) -> VirtualTime {
    let n = t.nanoseconds
    // n * ppm / 1e6 without overflow for any realistic n and ppm.
    let drift = (n / 1_000_000) &* driftPPM &+ (n % 1_000_000) &* driftPPM / 1_000_000
    return VirtualTime(nanoseconds: _saturatingAdd(_saturatingAdd(n, skew.nanoseconds), _saturatingAdd(jumped.nanoseconds, drift)))
  }

  /// Moves the clock by `delta` from now on.
  public mutating func jump(by delta: SimDuration) { jumped = jumped + delta }
}
