/// Exactly which intents on one record a device had received: a set of per-record ordinals
/// (the record's first effective intent is 1, its second 2, …), kept as a contiguous prefix
/// `1...prefix` plus the ordinals above it that arrived out of order.
///
/// Causality is tracked per record and exactly (`oracle.md`): a device that has applied the
/// iPad's third edit of a note has not thereby received its second, and knowing something about
/// one record says nothing about another. In the common case — edits of a record arrive in
/// order — a context is one integer.
///
///     var c = CausalContext()
///     c.insert(1); c.insert(3)     // prefix 1, extras [3]
///     c.contains(2)                // false
///     c.insert(2)                  // prefix 3, no extras
///
/// - Complexity: `contains` is O(log e) and `insert` O(e) for e extras; `formUnion` is
///   O(e₁ + e₂).
package struct CausalContext: Hashable, Sendable, CustomStringConvertible {
  /// Every ordinal in `1...prefix` is in the set.
  package private(set) var prefix: Int32 = 0
  /// Ordinals above `prefix + 1`, sorted and distinct (nil while empty: no allocation).
  @usableFromInline var _extras: [Int32]?

  package init() {}

  /// The ordinals above the contiguous prefix, in order.
  package var extras: [Int32] { _extras ?? [] }

  /// Whether the set holds nothing.
  package var isEmpty: Bool { prefix == 0 && _extras == nil }

  /// How many ordinals the set holds.
  package var count: Int { Int(prefix) + (_extras?.count ?? 0) }

  @inlinable
  package func contains(_ ordinal: Int32) -> Bool {
    if ordinal <= prefix { return ordinal > 0 }
    guard let extras = _extras else { return false }
    var lo = 0
    var hi = extras.count
    while lo < hi {
      let mid = (lo + hi) >> 1
      if extras[mid] < ordinal { lo = mid + 1 } else { hi = mid }
    }
    return lo < extras.count && extras[lo] == ordinal
  }

  package mutating func insert(_ ordinal: Int32) {
    guard ordinal > prefix else { return }
    if ordinal == prefix + 1 {
      prefix = ordinal
      _absorb()
      return
    }
    var extras = _extras ?? []
    _extras = nil
    var lo = 0
    var hi = extras.count
    while lo < hi {
      let mid = (lo + hi) >> 1
      if extras[mid] < ordinal { lo = mid + 1 } else { hi = mid }
    }
    if lo == extras.count || extras[lo] != ordinal { extras.insert(ordinal, at: lo) }
    _extras = extras
    _checkInvariants()
  }

  /// Adds every ordinal of `other`.
  package mutating func formUnion(_ other: CausalContext) {
    if other.prefix > prefix { prefix = other.prefix }
    if let theirs = other._extras {
      if let mine = _extras {
        var merged: [Int32] = []
        merged.reserveCapacity(mine.count + theirs.count)
        var i = 0
        var j = 0
        while i < mine.count || j < theirs.count {
          let next: Int32
          if j == theirs.count || (i < mine.count && mine[i] < theirs[j]) {
            next = mine[i]
            i += 1
          } else if i == mine.count || theirs[j] < mine[i] {
            next = theirs[j]
            j += 1
          } else {
            next = mine[i]
            i += 1
            j += 1
          }
          if next > prefix { merged.append(next) }
        }
        _extras = merged.isEmpty ? nil : merged
      } else {
        let above = theirs.filter { $0 > prefix }
        _extras = above.isEmpty ? nil : above
      }
    } else if let mine = _extras, mine.first! <= prefix {
      let above = mine.filter { $0 > prefix }
      _extras = above.isEmpty ? nil : above
    }
    _absorb()
  }

  /// Moves extras that continue the prefix into it.
  mutating func _absorb() {
    guard var extras = _extras else { return }
    _extras = nil
    var k = 0
    while k < extras.count, extras[k] <= prefix + 1 {
      if extras[k] == prefix + 1 { prefix += 1 }
      k += 1
    }
    if k > 0 { extras.removeFirst(k) }
    _extras = extras.isEmpty ? nil : extras
    _checkInvariants()
  }

  @inline(__always)
  func _checkInvariants() {
    #if DEBUG
      if let e = _extras {
        precondition(!e.isEmpty, "CausalContext: empty extras must be nil")
        precondition(e[0] > prefix + 1, "CausalContext: an extra continues or overlaps the prefix")
        for k in 1..<e.count { precondition(e[k - 1] < e[k], "CausalContext: extras not sorted and distinct") }
      }
    #endif
  }

  /// `{1…4, 7, 9}`
  package var description: String {
    var parts: [String] = []
    if prefix == 1 { parts.append("1") } else if prefix > 1 { parts.append("1…\(prefix)") }
    parts += extras.map(String.init)
    return "{" + parts.joined(separator: ", ") + "}"
  }
}
