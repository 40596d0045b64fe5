/// Per device (by rank), the newest hybrid-logical-clock stamp of that device's writes a copy
/// of a record has incorporated. Policy metadata, like stamps: `update-wins` uses it to tell a
/// write the deleting device had not seen (it beats the delete) from one it had (it does not).
/// The oracle never reads it.
public struct VersionVector: Hashable, Sendable {
  /// One device's newest incorporated write: the hybrid-logical-clock part of its stamp, ordered
  /// by `wall`, then `logical`.
  public struct Entry: Hashable, Sendable, Comparable {
    /// The stamp's ``Stamp/hlcWall`` (nanoseconds).
    public var wall: Int64
    /// The stamp's ``Stamp/hlcLogical``.
    public var logical: Int32
    /// An entry for a stamp's hybrid-clock reading.
    @inlinable public init(wall: Int64, logical: Int32) {
      self.wall = wall
      self.logical = logical
    }
    /// Older than every write: the entry of a device none of whose writes was incorporated.
    public static let zero = Entry(wall: .min, logical: 0)
    public static func < (a: Entry, b: Entry) -> Bool { (a.wall, a.logical) < (b.wall, b.logical) }
  }

  /// nil while empty: most policies never fill it, and copying nil costs no reference count.
  var _storage: [Entry]?

  /// An empty vector: no write incorporated.
  public init() {}

  /// One entry per device rank, from rank 0 up to the highest rank noted; empty while nothing was
  /// noted.
  public var entries: [Entry] { _storage ?? [] }

  /// The newest incorporated write of the device with rank `rank`, or ``Entry/zero`` when there is
  /// none (any rank, even negative or out of range, may be asked).
  public subscript(rank: Int32) -> Entry {
    guard let s = _storage, rank >= 0, Int(rank) < s.count else { return .zero }
    return s[Int(rank)]
  }

  /// Records a write stamped `s`.
  package mutating func note(_ s: Stamp) {
    guard s.device >= 0 else { return }
    let i = Int(s.device)
    var e = _storage ?? []
    if e.count <= i { e.append(contentsOf: repeatElement(.zero, count: i + 1 - e.count)) }
    let entry = Entry(wall: s.hlcWall, logical: s.hlcLogical)
    if e[i] < entry { e[i] = entry }
    _storage = e
  }

  /// Pointwise maximum: everything either copy has incorporated.
  public mutating func formUnion(_ other: VersionVector) {
    guard let theirs = other._storage else { return }
    var e = _storage ?? []
    _storage = nil
    if theirs.count > e.count { e.append(contentsOf: repeatElement(.zero, count: theirs.count - e.count)) }
    for i in theirs.indices where e[i] < theirs[i] { e[i] = theirs[i] }
    _storage = e
  }

  /// Whether this copy has a write `other` has not seen.
  public func hasUnseenWrites(comparedTo other: VersionVector) -> Bool {
    guard let mine = _storage else { return false }
    return mine.indices.contains { other[Int32($0)] < mine[$0] }
  }
}
