/// Per device (by rank), the newest hybrid-logical-clock stamp of that device's writes a copy
/// of a record has incorporated. Policy metadata, like stamps: `update-wins` uses it to tell a
/// write the deleting device had not seen (it beats the delete) from one it had (it does not).
/// The oracle never reads it.
public struct VersionVector: Hashable, Sendable {
  public struct Entry: Hashable, Sendable, Comparable {
    public var wall: Int64
    public var logical: Int32
    public static let zero = Entry(wall: .min, logical: 0)
    public static func < (a: Entry, b: Entry) -> Bool { (a.wall, a.logical) < (b.wall, b.logical) }
  }

  public private(set) var entries: [Entry] = []

  public init() {}

  public subscript(rank: Int32) -> Entry {
    Int(rank) < entries.count && rank >= 0 ? entries[Int(rank)] : .zero
  }

  /// Records a write stamped `s`.
  public mutating func note(_ s: Stamp) {
    guard s.device >= 0 else { return }
    let i = Int(s.device)
    if entries.count <= i { entries.append(contentsOf: repeatElement(.zero, count: i + 1 - entries.count)) }
    let e = Entry(wall: s.hlcWall, logical: s.hlcLogical)
    if entries[i] < e { entries[i] = e }
  }

  /// Pointwise maximum: everything either copy has incorporated.
  public mutating func formUnion(_ other: VersionVector) {
    if other.entries.count > entries.count {
      entries.append(contentsOf: repeatElement(.zero, count: other.entries.count - entries.count))
    }
    for i in other.entries.indices where entries[i] < other.entries[i] { entries[i] = other.entries[i] }
  }

  /// Whether this copy has a write `other` has not seen.
  public func hasUnseenWrites(comparedTo other: VersionVector) -> Bool {
    entries.indices.contains { other[Int32($0)] < entries[$0] }
  }
}
