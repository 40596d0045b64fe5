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
    a.intent < b.intent || (a.intent == b.intent && a.offset < b.offset)
  }
  /// Both halves as one 64-bit word: one round of the hasher instead of two (the oracle hashes
  /// every character of a text).
  @inlinable public func hash(into hasher: inout Hasher) {
    hasher.combine(UInt64(UInt32(bitPattern: intent)) | UInt64(UInt32(bitPattern: offset)) << 32)
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

  /// A text of exactly these atoms, in this order, whatever they are: for tests that hold the
  /// fast merge to the reference on inputs no edits make.
  init(_atoms atoms: [TextAtom]) {
    self.atoms = atoms
  }

  /// The visible text.
  ///
  /// - Complexity: O(n), n the number of atoms: one pass to size the string, one to fill it.
  public var string: String {
    atoms.withUnsafeBufferPointer { atoms in
      var length = 0
      for i in 0..<atoms.count where atoms[i].isVisible { length += UTF8.width(atoms[i].scalar) }
      return String(unsafeUninitializedCapacity: length) { utf8 in
        var n = 0
        for i in 0..<atoms.count where atoms[i].isVisible {
          let v = atoms[i].scalar.value
          if v < 0x80 {
            utf8[n] = UInt8(v)
            n += 1
          } else if v < 0x800 {
            utf8[n] = UInt8(0xC0 | v >> 6)
            utf8[n + 1] = UInt8(0x80 | v & 0x3F)
            n += 2
          } else if v < 0x1_0000 {
            utf8[n] = UInt8(0xE0 | v >> 12)
            utf8[n + 1] = UInt8(0x80 | v >> 6 & 0x3F)
            utf8[n + 2] = UInt8(0x80 | v & 0x3F)
            n += 3
          } else {
            utf8[n] = UInt8(0xF0 | v >> 18)
            utf8[n + 1] = UInt8(0x80 | v >> 12 & 0x3F)
            utf8[n + 2] = UInt8(0x80 | v >> 6 & 0x3F)
            utf8[n + 3] = UInt8(0x80 | v & 0x3F)
            n += 4
          }
        }
        return n
      }
    }
  }

  public var description: String { string }

  /// Appends `text` at the end.
  package mutating func append(_ text: String, by intent: IntentID) {
    _insert(text, after: atoms.last?.id, at: atoms.count, by: intent)
  }

  /// Appends `text` at the end, its characters numbered from `firstOffset` in `intent`'s string:
  /// for a text rebuilt from what a user's app shows, piece by piece (characters of no known
  /// intent go in as intent 0, numbered on so that none repeats another's id).
  package mutating func append(_ text: String, by intent: IntentID, firstOffset: Int32) {
    _insert(text, after: atoms.last?.id, at: atoms.count, by: intent, firstOffset: firstOffset)
  }

  /// Replaces the first visible occurrence of `old` by `new`. Returns `false` (and changes
  /// nothing) when `old` is empty or not present.
  ///
  /// - Complexity: O(n + m + k): one pass over the atoms (Knuth–Morris–Pratt over the visible
  ///   scalars, no index array), m scalars in `old`, k in `new`; at most one move of the atoms
  ///   after the match.
  @discardableResult
  package mutating func replace(_ old: String, with new: String, by intent: IntentID) -> Bool {
    _replace(old, with: new, by: intent, collecting: false) != nil
  }

  /// `replace(_:with:by:)`, returning the ids of the characters it took out of the visible
  /// text, sorted: exactly `Set(visibleAtomIDs)` before minus `visibleAtomIDs` after. Nil (and
  /// nothing changed) when `old` is empty or not present.
  ///
  /// - Complexity: O(n log m + k): the replacement, then one pass over the atoms for ids that
  ///   are still visible elsewhere (only in texts no edits make, where ids repeat); no hashing.
  package mutating func replaceReturningRemoved(_ old: String, with new: String, by intent: IntentID) -> [AtomID]? {
    guard var marked = _replace(old, with: new, by: intent, collecting: true) else { return nil }
    marked.sort()
    var removed: [AtomID] = []
    removed.reserveCapacity(marked.count)
    for id in marked where removed.last != id { removed.append(id) }
    guard let low = removed.first, let high = removed.last else { return removed }
    var stillVisible = [Bool](repeating: false, count: removed.count)
    atoms.withUnsafeBufferPointer { atoms in
      for i in 0..<atoms.count where atoms[i].isVisible {
        let id = atoms[i].id
        if id < low || high < id { continue }
        var lower = 0
        var upper = removed.count
        while lower < upper {
          let middle = (lower + upper) / 2
          if removed[middle] < id { lower = middle + 1 } else { upper = middle }
        }
        if lower < removed.count && removed[lower] == id { stillVisible[lower] = true }
      }
    }
    if !stillVisible.contains(true) { return removed }
    return removed.indices.filter { !stillVisible[$0] }.map { removed[$0] }
  }

  /// The replacement itself: nil when `old` is empty or not present, else the ids of the
  /// characters marked removed (with `collecting`, in reverse document order; else empty).
  mutating func _replace(_ old: String, with new: String, by intent: IntentID, collecting: Bool) -> [AtomID]? {
    let needle = Array(old.unicodeScalars)
    guard !needle.isEmpty, let last = _endOfFirstVisible(needle) else { return nil }
    // The new atoms are the newest children of `last`, so they belong right after it; any
    // older subtree of `last` follows them, as RGA orders it. Inserting before marking the
    // removed characters copies a shared buffer once, not twice.
    _insert(new, after: atoms[last].id, at: last + 1, by: intent)
    var marked: [AtomID] = []
    if collecting { marked.reserveCapacity(needle.count) }
    var index = last
    var left = needle.count
    while left > 0 {
      if atoms[index].isVisible {
        atoms[index].deletedBy = intent
        if collecting { marked.append(atoms[index].id) }
        left -= 1
      }
      index -= 1
    }
    return marked
  }

  /// The index of the atom that ends the first occurrence of `needle` (not empty) in the
  /// visible scalars, or nil.
  ///
  /// - Complexity: O(n + m): Knuth–Morris–Pratt, one pass over the atoms.
  func _endOfFirstVisible(_ needle: [Unicode.Scalar]) -> Int? {
    let m = needle.count
    // border[q]: the length of the longest proper prefix of needle[0...q] that is also its suffix.
    var border = [Int](repeating: 0, count: m)
    var k = 0
    for q in needle.indices.dropFirst() {
      while k > 0 && needle[q] != needle[k] { k = border[k - 1] }
      if needle[q] == needle[k] { k += 1 }
      border[q] = k
    }
    // While loops over buffer pointers: in debug builds (the tests') several times faster than
    // iterators and array subscripts.
    return atoms.withUnsafeBufferPointer { atoms in
      needle.withUnsafeBufferPointer { needle in
        border.withUnsafeBufferPointer { border in
          var matched = 0
          var index = 0
          while index < atoms.count {
            if atoms[index].deletedBy == 0 {
              let c = atoms[index].scalar
              while matched > 0 && c != needle[matched] { matched = border[matched - 1] }
              if c == needle[matched] { matched += 1 }
              if matched == m { return index }
            }
            index += 1
          }
          return nil
        }
      }
    }
  }

  /// `replace(_:with:by:)` as first written: a filtered index array of the visible atoms and
  /// a naive search (O(n·m)). Kept as the specification the tests hold the fast one to.
  @discardableResult
  mutating func _replaceReference(_ old: String, with new: String, by intent: IntentID) -> Bool {
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
    return true
  }

  /// Removes every visible character (they stay as tombstones).
  package mutating func removeAll(by intent: IntentID) {
    atoms.withUnsafeMutableBufferPointer { atoms in
      for i in 0..<atoms.count where atoms[i].isVisible { atoms[i].deletedBy = intent }
    }
  }

  /// Inserts `text` at `position` as a chain of atoms: the first after `parent`, each next one
  /// after the one before.
  ///
  /// - Complexity: O(k) at the end of a text this value alone holds, else O(k + n − position), k
  ///   the scalars in `text`. (The array's capacity, which copies inherit, grows as one insertion
  ///   of the whole text would grow it — to twice the old capacity, or what is needed if more —
  ///   and only when the text does not fit: appending atom by atom would double it several
  ///   times for one long text. At the end the atoms go straight in; elsewhere they are built
  ///   aside and inserted at once.)
  mutating func _insert(_ text: String, after parent: AtomID?, at position: Int, by intent: IntentID, firstOffset: Int32 = 0) {
    var previous = parent
    // (At most one scalar a UTF-8 byte: room is made once, only when the text does not fit.)
    if position == atoms.count {
      let needed = atoms.count + text.utf8.count
      if needed > atoms.capacity { atoms.reserveCapacity(Swift.max(needed, 2 * atoms.capacity)) }
      for (offset, scalar) in text.unicodeScalars.enumerated() {
        let id = AtomID(intent: intent, offset: firstOffset + Int32(offset))
        atoms.append(TextAtom(id: id, scalar: scalar, parent: previous, deletedBy: 0))
        previous = id
      }
      return
    }
    var new: [TextAtom] = []
    new.reserveCapacity(text.utf8.count)
    for (offset, scalar) in text.unicodeScalars.enumerated() {
      let id = AtomID(intent: intent, offset: firstOffset + Int32(offset))
      new.append(TextAtom(id: id, scalar: scalar, parent: previous, deletedBy: 0))
      previous = id
    }
    atoms.insert(contentsOf: new, at: position)
  }

  /// The ids of the visible characters, in order.
  package var visibleAtomIDs: [AtomID] {
    atoms.withUnsafeBufferPointer { atoms in
      var ids: [AtomID] = []
      for i in 0..<atoms.count where atoms[i].isVisible { ids.append(atoms[i].id) }
      return ids
    }
  }

  /// Merges two versions of one text: every character either has, removed if either removed
  /// it, in RGA order (siblings newest first). Commutative, associative and idempotent.
  ///
  /// - Complexity: O(n + h log h) for versions of one text (n atoms in all, h insertions):
  ///   one walk along both atom arrays (`_mergedInOrder(with:)`). Inputs that no sequence of
  ///   edits to one text produces fall back to `_mergedReference(with:)`, O(n log n).
  public func merged(with other: TextValue) -> TextValue {
    if self == other { return self }  // counts first, then shared storage, then one scan
    return _mergedInOrder(with: other) ?? _mergedReference(with: other)
  }

  /// ``merged(with:)`` by one walk along both atom arrays, or nil when the inputs are not
  /// versions of one text as edits make them (then `_mergedReference(with:)` decides).
  ///
  /// Each array is, for versions of one text, its characters' RGA tree in depth-first order,
  /// and the merged order restricted to either side is that side's order, so the result is an
  /// interleaving of the two. Where both sides hold the same character it is taken once (its
  /// removals merged); where they differ, the character whose parent is deeper on the current
  /// path goes first (the other waits for that subtree), and between siblings the newer.
  ///
  /// The result is then only trusted if it checks out, as it is built, as a depth-first order
  /// of one tree with siblings newest first, in which every character but the first of an
  /// insertion follows its predecessor in that insertion and the insertions' first characters
  /// are distinct. That makes every id appear once (by induction on the offset), hence every
  /// shared character matched and the atoms those the reference keeps; and it is the one order
  /// the reference produces for them. So whatever the inputs, a non-nil answer is exactly the
  /// reference's.
  ///
  /// - Complexity: O(n + h log h), n atoms in all, h atoms at offset 0; no hashing.
  func _mergedInOrder(with other: TextValue) -> TextValue? {
    let merged = atoms.withUnsafeBufferPointer { a in other.atoms.withUnsafeBufferPointer { b in Self._mergedInOrder(a, b) } }
    guard let merged else { return nil }
    var result = TextValue()
    result.atoms = merged
    return result
  }

  /// The walk of `_mergedInOrder(with:)`, over the two arrays' storage: the merged atoms, or
  /// nil.
  static func _mergedInOrder(_ a: UnsafeBufferPointer<TextAtom>, _ b: UnsafeBufferPointer<TextAtom>) -> [TextAtom]? {
    var out: [TextAtom] = []
    out.reserveCapacity(Swift.max(a.count, b.count) + Swift.min(a.count, b.count) / 16 + 16)
    var path = _Path()  // from a root to the last atom placed
    var heads: [AtomID] = []  // the atoms at offset 0
    let unknown = Int.min
    var i = 0
    var j = 0
    var parentOfA = unknown  // the depth of a[i]'s parent on the path (-1: the start)
    var parentOfB = unknown
    // Finding a waiting atom's parent costs at most the pops its own side would make, O(n) in
    // all for versions of one text; more means the inputs are not, and the reference takes over.
    var budget = 2 * (a.count + b.count) + 64

    while true {
      // Most atoms continue the run on top of the path, both sides holding them or one side
      // alone: a tight loop does for them what the general step below does (take them,
      // `place` extends the top run by one), without its calls.
      if var top = path.runs.last {
        let placed = out.count
        while top.last < Int32.max {
          let id = AtomID(intent: top.intent, offset: top.last + 1)
          let parent = AtomID(intent: top.intent, offset: top.last)
          var next: TextAtom
          if i < a.count && j < b.count {
            guard a[i].id == id, b[j].id == id, a[i].parent == parent else { break }
            next = a[i]
            let y = b[j]
            if next.deletedBy == 0 || (y.deletedBy != 0 && y.deletedBy < next.deletedBy) { next.deletedBy = y.deletedBy }
            i += 1
            j += 1
          } else if i < a.count {
            guard a[i].id == id, a[i].parent == parent else { break }
            next = a[i]
            i += 1
          } else if j < b.count {
            guard b[j].id == id, b[j].parent == parent else { break }
            next = b[j]
            j += 1
          } else {
            break
          }
          out.append(next)
          top.last += 1
        }
        if out.count > placed {
          path.runs[path.runs.count - 1] = top
          parentOfA = unknown
          parentOfB = unknown
        }
      }
      var next: TextAtom
      if i < a.count && j < b.count {
        let x = a[i]
        let y = b[j]
        if x.id == y.id {
          next = x
          if x.deletedBy == 0 || (y.deletedBy != 0 && y.deletedBy < x.deletedBy) { next.deletedBy = y.deletedBy }
          i += 1
          j += 1
          parentOfA = unknown
          parentOfB = unknown
        } else {
          if parentOfA == unknown {
            guard let d = path.depth(of: x.parent, budget: &budget) else { return nil }
            parentOfA = d
          }
          if parentOfB == unknown {
            guard let d = path.depth(of: y.parent, budget: &budget) else { return nil }
            parentOfB = d
          }
          guard budget >= 0 else { return nil }
          // The deeper parent's subtree is unfinished, so its child goes first; siblings newest first.
          if parentOfA > parentOfB || (parentOfA == parentOfB && y.id < x.id) {
            next = x
            i += 1
            parentOfA = unknown
          } else {
            next = y
            j += 1
            parentOfB = unknown
          }
        }
      } else if i < a.count {
        next = a[i]
        i += 1
      } else if j < b.count {
        next = b[j]
        j += 1
      } else {
        break
      }
      guard path.place(next) else { return nil }
      if next.id.offset == 0 { heads.append(next.id) }
      out.append(next)
    }
    heads.sort()
    for k in heads.indices.dropFirst() where heads[k] == heads[k - 1] { return nil }
    return out
  }

  /// The path from a root of the RGA tree to the last atom placed, as runs of consecutive
  /// characters of one insertion (a long typed or pasted text is one run), checking each atom
  /// placed after it (see `_mergedInOrder(with:)`).
  struct _Path {
    /// Characters `first...last` of the text `intent` inserted; `first` is at depth `depth`.
    struct Run {
      var intent: IntentID
      var first: Int32
      var last: Int32
      var depth: Int
      func contains(_ id: AtomID) -> Bool { id.intent == intent && first <= id.offset && id.offset <= last }
    }
    var runs: [Run] = []

    /// The depth of the topmost `parent` on the path (-1 for nil, the start), or nil when it is
    /// not on it. Spends one unit of `budget` a run looked at.
    func depth(of parent: AtomID?, budget: inout Int) -> Int? {
      guard let parent else { return -1 }
      var k = runs.count - 1
      while k >= 0 {
        budget -= 1
        if runs[k].contains(parent) { return runs[k].depth + Int(parent.offset - runs[k].first) }
        k -= 1
      }
      return nil
    }

    /// Extends the path by `atom` if it may come next in a depth-first order, siblings newest
    /// first, of characters chained by insertion: its parent is on the path (the path is cut
    /// back to it), the parent's previous child there is newer, and a character other than the
    /// first of its insertion follows the one before it. Returns false otherwise.
    mutating func place(_ atom: TextAtom) -> Bool {
      let id = atom.id
      if id.offset != 0 {
        guard id.offset > 0, let parent = atom.parent, parent.intent == id.intent, parent.offset == id.offset - 1 else { return false }
        // The common case: the next character of the run on top.
        let top = runs.count - 1
        if top >= 0 && runs[top].intent == id.intent && runs[top].last == parent.offset {
          runs[top].last = id.offset
          return true
        }
      }
      guard let parent = atom.parent else {
        if !runs.isEmpty && !(id < AtomID(intent: runs[0].intent, offset: runs[0].first)) { return false }
        runs.removeAll(keepingCapacity: true)
        runs.append(Run(intent: id.intent, first: id.offset, last: id.offset, depth: 0))
        return true
      }
      var above: Run?  // the run just above the one holding the parent
      while !runs.isEmpty {
        var run = runs[runs.count - 1]
        guard run.contains(parent) else {
          above = runs.removeLast()
          continue
        }
        // The parent's previous child, if it has one: the next character of its run, or the
        // first of the run above it. It must be newer.
        var sibling: AtomID?
        if parent.offset < run.last {
          sibling = AtomID(intent: run.intent, offset: parent.offset + 1)
        } else if let above {
          sibling = AtomID(intent: above.intent, offset: above.first)
        }
        if let sibling, !(id < sibling) { return false }
        run.last = parent.offset
        if run.intent == id.intent && id.offset == parent.offset + 1 {
          run.last = id.offset
          runs[runs.count - 1] = run
        } else {
          runs[runs.count - 1] = run
          runs.append(Run(intent: id.intent, first: id.offset, last: id.offset, depth: run.depth + Int(run.last - run.first) + 1))
        }
        return true
      }
      return false
    }
  }

  /// ``merged(with:)`` as first written, for any inputs: hash maps of the atoms and of each
  /// parent's children, sorted, walked depth-first. The specification `_mergedInOrder(with:)`
  /// is held to, and the fallback for inputs it declines.
  ///
  /// - Complexity: O(n log n), with hashing.
  func _mergedReference(with other: TextValue) -> TextValue {
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
