/// The identity of one character of text: the intent that inserted it and its offset in that
/// intent's inserted string. Ids never repeat, so an append applied twice cannot hide.
@frozen
public struct AtomID: Hashable, Comparable, Sendable {
  /// The intent that inserted the character (0: the schema default's text).
  public var intent: IntentID
  /// The character's position, from 0 in Unicode scalars, in the string that intent inserted.
  public var offset: Int32
  /// The id of character `offset` of the text `intent` inserted.
  @inlinable public init(intent: IntentID, offset: Int32) {
    self.intent = intent
    self.offset = offset
  }
  @inlinable public static func < (a: AtomID, b: AtomID) -> Bool {
    (a.intent, a.offset) < (b.intent, b.offset)
  }
}

/// One character with its provenance and its place in the sequence (RGA: inserted after
/// `parent`, `nil` = at the start).
public struct TextAtom: Hashable, Sendable {
  /// Which intent inserted the character, and where in its string.
  public var id: AtomID
  /// The character itself: one Unicode scalar.
  public var scalar: Unicode.Scalar
  /// The character it was inserted after; `nil` when it was inserted at the start of the text.
  public var parent: AtomID?
  /// The intent that removed it, or 0 while it is visible.
  public var deletedBy: IntentID

  /// Whether the character is shown: no intent has removed it.
  @inlinable public var isVisible: Bool { deletedBy == 0 }
}

/// A text field: characters tagged with the intent that inserted them, kept in document order,
/// removed ones kept as tombstones so that concurrent versions can be merged (a replicated
/// growable array). Whole-text policies copy the winner's value; `text=merge` calls
/// ``merged(with:)``.
///
///     var t = TextValue()
///     t.append("In teh beginning", by: 1)
///     t.replace("teh", with: "the", by: 7)   // true
///     t.string                               // "In the beginning"
public struct TextValue: Hashable, Sendable, CustomStringConvertible {
  public private(set) var atoms: [TextAtom] = []

  /// An empty text.
  public init() {}

  /// A text holding `text`, every character inserted by `intent` (0: written by no intent, as a
  /// schema default is).
  public init(_ text: String, by intent: IntentID) {
    append(text, by: intent)
  }

  /// The visible text.
  public var string: String {
    var s = String.UnicodeScalarView()
    for a in atoms where a.isVisible { s.append(a.scalar) }
    return String(s)
  }

  public var description: String { string }

  /// Appends `text` at the end.
  package mutating func append(_ text: String, by intent: IntentID) {
    _insert(text, after: atoms.last?.id, at: atoms.count, by: intent)
  }

  /// Replaces the first visible occurrence of `old` by `new`. Returns `false` (and changes
  /// nothing) when `old` is empty or not present.
  @discardableResult
  package mutating func replace(_ old: String, with new: String, by intent: IntentID) -> Bool {
    let needle = Array(old.unicodeScalars)
    guard !needle.isEmpty else { return false }
    let visible = atoms.indices.filter { atoms[$0].isVisible }
    guard visible.count >= needle.count else { return false }
    var start: Int?
    search: for i in 0...(visible.count - needle.count) {
      for j in 0..<needle.count where atoms[visible[i + j]].scalar != needle[j] { continue search }
      start = i
      break
    }
    guard let start else { return false }
    let removed = visible[start..<(start + needle.count)]
    for index in removed { atoms[index].deletedBy = intent }
    let last = removed.last!
    _insert(new, after: atoms[last].id, at: last + 1, by: intent)
    // The new atoms are the newest children of `last`, so they belong right after it; any
    // older subtree of `last` follows them, as RGA orders it.
    return true
  }

  /// Removes every visible character (they stay as tombstones).
  package mutating func removeAll(by intent: IntentID) {
    for i in atoms.indices where atoms[i].isVisible { atoms[i].deletedBy = intent }
  }

  mutating func _insert(_ text: String, after parent: AtomID?, at position: Int, by intent: IntentID) {
    var previous = parent
    var new: [TextAtom] = []
    for (offset, scalar) in text.unicodeScalars.enumerated() {
      let id = AtomID(intent: intent, offset: Int32(offset))
      new.append(TextAtom(id: id, scalar: scalar, parent: previous, deletedBy: 0))
      previous = id
    }
    atoms.insert(contentsOf: new, at: position)
  }

  /// The ids of the visible characters, in order.
  package var visibleAtomIDs: [AtomID] { atoms.filter(\.isVisible).map(\.id) }

  /// Merges two versions of one text: every character either has, removed if either removed
  /// it, in RGA order (siblings newest first). Commutative, associative and idempotent.
  public func merged(with other: TextValue) -> TextValue {
    if self == other { return self }
    var byID: [AtomID: TextAtom] = [:]
    byID.reserveCapacity(atoms.count + other.atoms.count)
    for a in atoms { byID[a.id] = a }
    for b in other.atoms {
      if var a = byID[b.id] {
        if a.deletedBy == 0 || (b.deletedBy != 0 && b.deletedBy < a.deletedBy) { a.deletedBy = b.deletedBy }
        byID[b.id] = a
      } else {
        byID[b.id] = b
      }
    }
    // Children of each parent, newest first; walk depth-first from the start.
    let all = byID.values.sorted { $0.id > $1.id }
    var children: [AtomID?: [AtomID]] = [:]
    for a in all { children[a.parent, default: []].append(a.id) }
    var result = TextValue()
    result.atoms.reserveCapacity(all.count)
    var stack: [AtomID] = (children[nil] ?? []).reversed()
    while let id = stack.popLast() {
      result.atoms.append(byID[id]!)
      if let kids = children[id] { stack.append(contentsOf: kids.reversed()) }
    }
    // Atoms whose parent is missing (cannot happen for versions of one field) go last, in id order.
    if result.atoms.count < all.count {
      let placed = Set(result.atoms.map(\.id))
      result.atoms.append(contentsOf: all.reversed().filter { !placed.contains($0.id) })
    }
    return result
  }
}
