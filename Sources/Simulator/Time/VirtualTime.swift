/// A point in simulated time: whole nanoseconds since the simulation started.
///
/// Simulated time is an integer so that no rounding can ever change the order of two events.
/// Device clocks may read negative values (a clock skewed backwards at the start); the
/// simulation's own time never goes below zero and never goes backwards.
///
///     let t = VirtualTime.zero + .milliseconds(2_200)
///     print(t)            // 2.200s
@frozen
public struct VirtualTime: Hashable, Comparable, Sendable {
  /// Nanoseconds since the start of the simulation.
  public var nanoseconds: Int64

  /// The instant `nanoseconds` after the simulation started.
  @inlinable
  public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

  /// The start of every simulation.
  public static let zero = VirtualTime(nanoseconds: 0)
  /// The end of time; used as "never".
  public static let distantFuture = VirtualTime(nanoseconds: .max)

  @inlinable
  public static func < (lhs: VirtualTime, rhs: VirtualTime) -> Bool {
    lhs.nanoseconds < rhs.nanoseconds
  }

  /// Adds a duration, saturating at ``distantFuture`` (and at `Int64.min`) instead of trapping.
  @inlinable
  public static func + (lhs: VirtualTime, rhs: SimDuration) -> VirtualTime {
    VirtualTime(nanoseconds: _saturatingAdd(lhs.nanoseconds, rhs.nanoseconds))
  }

  /// Adds a duration in place, saturating like `+`.
  @inlinable
  public static func += (lhs: inout VirtualTime, rhs: SimDuration) { lhs = lhs + rhs }

  /// Subtracts a duration, saturating at ``distantFuture`` (and at `Int64.min`) instead of trapping.
  @inlinable
  public static func - (lhs: VirtualTime, rhs: SimDuration) -> VirtualTime {
    VirtualTime(nanoseconds: _saturatingAdd(lhs.nanoseconds, rhs.nanoseconds == .min ? .max : -rhs.nanoseconds))
  }

  /// The duration from `rhs` to `lhs`.
  @inlinable
  public static func - (lhs: VirtualTime, rhs: VirtualTime) -> SimDuration {
    SimDuration(nanoseconds: _saturatingAdd(lhs.nanoseconds, rhs.nanoseconds == .min ? .max : -rhs.nanoseconds))
  }

  /// The time as the duration since zero.
  @inlinable
  public var sinceStart: SimDuration { SimDuration(nanoseconds: nanoseconds) }
}

extension VirtualTime: CustomStringConvertible {
  /// For people (``SimDuration/readable``): `2.200s`, `94.327s`, `40d 2h`.
  public var description: String { SimDuration(nanoseconds: nanoseconds).readable }
}

@inlinable
@inline(__always)
func _saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
  let (sum, overflow) = a.addingReportingOverflow(b)
  if !overflow { return sum }
  return b > 0 ? .max : .min
}
