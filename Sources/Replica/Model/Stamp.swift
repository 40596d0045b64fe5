/// The policy's own metadata on a write: the device clock reading, a hybrid logical clock and
/// the writer's device rank (its position in name order, for ties). Policies decide winners with
/// stamps; the oracle never reads them.
@frozen
public struct Stamp: Hashable, Sendable {
  /// The writer's device clock (nanoseconds; may be skewed).
  public var clock: Int64
  /// Hybrid logical clock: physical part (nanoseconds) and logical counter.
  public var hlcWall: Int64
  /// The hybrid logical clock's logical counter: orders stamps whose ``hlcWall`` is equal.
  public var hlcLogical: Int32
  /// The writer's rank among device names (sorted), used only to break ties.
  public var device: Int32

  /// A stamp from its parts; devices stamp their own writes, policies only compare stamps.
  @inlinable
  public init(clock: Int64, hlcWall: Int64, hlcLogical: Int32, device: Int32) {
    self.clock = clock
    self.hlcWall = hlcWall
    self.hlcLogical = hlcLogical
    self.device = device
  }

  /// The stamp of the schema's default values: older than every write.
  public static let origin = Stamp(clock: .min, hlcWall: .min, hlcLogical: 0, device: -1)

  /// The ``device`` of a stamp the server puts on a user's app's record: ``clock`` is when the
  /// server last saved it (`modificationDate`), ``hlcWall`` when it first did (`creationDate`).
  package static let serverDates: Int32 = -2

  /// Ordered by device clock, ties by device name.
  @inlinable public func clockOrder(_ other: Stamp) -> Bool {
    (clock, device) < (other.clock, other.device)
  }

  /// Ordered by hybrid logical clock, ties by device name.
  @inlinable public func hlcOrder(_ other: Stamp) -> Bool {
    (hlcWall, hlcLogical, device) < (other.hlcWall, other.hlcLogical, other.device)
  }
}

/// A hybrid logical clock (Kulkarni et al.): never behind the device clock, never behind any
/// stamp the device has seen, so a write made after seeing another always stamps later.
package struct HybridLogicalClock: Hashable, Sendable {
  package var wall: Int64 = .min
  package var logical: Int32 = 0

  package init() {}

  /// A stamp for a local write at device-clock reading `now`.
  package mutating func tick(now: Int64) -> (wall: Int64, logical: Int32) {
    if now > wall {
      wall = now
      logical = 0
    } else {
      logical &+= 1
    }
    return (wall, logical)
  }

  /// Takes in a stamp seen from elsewhere.
  package mutating func observe(_ stamp: Stamp) {
    if (stamp.hlcWall, stamp.hlcLogical) > (wall, logical) {
      wall = stamp.hlcWall
      logical = stamp.hlcLogical
    }
  }
}
