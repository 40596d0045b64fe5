/// Exactly which intents on one record a device had received: a set of per-record ordinals
/// (the record's first effective intent is 1, its second 2, …), kept as a contiguous prefix
/// `1...prefix` plus the ordinals above it that arrived out of order.
///
/// Causality is tracked per record and exactly (`oracle.md`): a device that has applied the
/// iPad's third edit of a note has not thereby received its second, and knowing something about
/// one record says nothing about another. In the common case — edits of a record arrive in
/// order — a context is one integer. Above the prefix it keeps runs of consecutive ordinals
/// (intervals), not single ordinals: a record edited concurrently by many devices leaves holes
/// (writes that lost and were never received), and the set between them stays a few intervals.
///
///     var c = CausalContext()
///     c.insert(1); c.insert(3)     // prefix 1, runs [3…3]
///     c.contains(2)                // false
///     c.insert(2)                  // prefix 3, no runs
///
/// - Complexity: `contains` is O(log r) and `insert` O(r) for r runs above the prefix;
///   `formUnion` is O(r₁ + r₂).
package struct CausalContext: Hashable, Sendable, CustomStringConvertible {
  /// Every ordinal in `1...prefix` is in the set.
  package private(set) var prefix: Int32 = 0
  /// Runs of ordinals above `prefix + 1`, flat as `[lo₀, hi₀, lo₁, hi₁, …]`: sorted, disjoint
  /// and not adjacent (`hiₖ + 1 < loₖ₊₁`), so every set has one representation (nil while
  /// empty: no allocation).
  @usableFromInline var _runs: [Int32]?
  /// The highest ordinal in the set (0 when empty), kept inline so that the common questions —
  /// is this new ordinal known, is this set behind that one — are answered without reading the
  /// runs (at scale, a cache miss per device and record).
  @usableFromInline var _max: Int32 = 0

  package init() {}

  /// The ordinals above the contiguous prefix, in order.
  package var extras: [Int32] {
    guard let runs = _runs else { return [] }
    var out: [Int32] = []
    for k in stride(from: 0, to: runs.count, by: 2) { out.append(contentsOf: runs[k]...runs[k + 1]) }
    return out
  }

  /// The runs above the prefix, as closed ranges in order.
  package var runs: [ClosedRange<Int32>] {
    guard let runs = _runs else { return [] }
    return stride(from: 0, to: runs.count, by: 2).map { runs[$0]...runs[$0 + 1] }
  }

  /// Whether the set holds nothing.
  package var isEmpty: Bool { prefix == 0 && _runs == nil }

  /// How many ordinals the set holds.
  package var count: Int {
    var n = Int(prefix)
    if let runs = _runs {
      for k in stride(from: 0, to: runs.count, by: 2) { n += Int(runs[k + 1] - runs[k]) + 1 }
    }
    return n
  }

  @inlinable
  package func contains(_ ordinal: Int32) -> Bool {
    if ordinal <= prefix { return ordinal > 0 }
    guard ordinal <= _max, let runs = _runs else { return false }
    let n = Self._runsStarting(atOrBelow: ordinal, in: runs)
    return n > 0 && ordinal <= runs[(n << 1) - 1]
  }

  /// How many runs start at or below `ordinal` (binary search; the last of them is the only one
  /// that can hold it).
  @inlinable
  static func _runsStarting(atOrBelow ordinal: Int32, in runs: [Int32]) -> Int {
    var lo = 0
    var hi = runs.count >> 1
    while lo < hi {
      let mid = (lo + hi) >> 1
      if runs[mid << 1] <= ordinal { lo = mid + 1 } else { hi = mid }
    }
    return lo
  }

  package mutating func insert(_ ordinal: Int32) {
    guard ordinal > prefix else { return }
    if ordinal > _max { _max = ordinal }
    if ordinal == prefix + 1 {
      prefix = ordinal
      _absorb()
      return
    }
    guard !contains(ordinal) else { return }
    var runs = _runs ?? []
    _runs = nil
    // Index of the first run starting above `ordinal`.
    let lo = Self._runsStarting(atOrBelow: ordinal, in: runs)
    let joinsBefore = lo > 0 && runs[(lo << 1) - 1] + 1 == ordinal
    let joinsAfter = lo < runs.count >> 1 && runs[lo << 1] == ordinal + 1
    switch (joinsBefore, joinsAfter) {
    case (true, true):
      runs.removeSubrange(((lo << 1) - 1)...(lo << 1))
    case (true, false):
      runs[(lo << 1) - 1] = ordinal
    case (false, true):
      runs[lo << 1] = ordinal
    case (false, false):
      runs.insert(contentsOf: [ordinal, ordinal], at: lo << 1)
    }
    _runs = runs
    _checkInvariants()
  }

  /// Whether every ordinal of this set is in `other`. Runs are maximal, so each of ours must lie
  /// inside one of theirs (or their prefix).
  package func isSubset(of other: CausalContext) -> Bool {
    // Their prefix stops below ours: the ordinal after it is ours, not theirs.
    if prefix > other.prefix || _max > other._max { return false }
    guard let mine = _runs else { return true }
    var k = 0
    while k < mine.count {
      if !other._covers(mine[k], mine[k + 1]) { return false }
      k += 2
    }
    return true
  }

  /// Whether `lo...hi` is wholly in the set.
  func _covers(_ lo: Int32, _ hi: Int32) -> Bool {
    if hi <= prefix { return lo > 0 }
    // `prefix + 1` is never in the set (runs start above it).
    guard lo > prefix + 1, let runs = _runs else { return false }
    let n = Self._runsStarting(atOrBelow: lo, in: runs)
    return n > 0 && hi <= runs[(n << 1) - 1]
  }

  /// Adds every ordinal of `other`.
  package mutating func formUnion(_ other: CausalContext) { _formUnion(other, mayHoldIt: true) }

  /// Adds every ordinal of `other`, which has one this set does not (the caller checked): the
  /// same union, without first asking whether this set already holds all of `other` — a walk
  /// over `other`'s runs that is bound to fail.
  package mutating func formUnion(holdingNew other: CausalContext) { _formUnion(other, mayHoldIt: false) }

  @inline(__always)
  mutating func _formUnion(_ other: CausalContext, mayHoldIt: Bool) {
    if other._max <= prefix { return }  // all of theirs is in our prefix
    guard let theirs = other._runs else {
      if other.prefix > prefix {
        prefix = other.prefix
        if other._max > _max { _max = other._max }
        _absorb()
      }
      return
    }
    // The common cases allocate nothing: one side already holds the other.
    if mayHoldIt, other.isSubset(of: self) { return }
    if isSubset(of: other) {
      self = other
      return
    }
    let newPrefix = max(prefix, other.prefix)
    _max = max(_max, other._max)
    let mine = _runs ?? []
    _runs = nil
    var merged: [Int32] = []
    merged.reserveCapacity(mine.count + theirs.count)
    var top = newPrefix  // the highest ordinal covered so far (the prefix, then the last run)
    var i = 0
    var j = 0
    while i < mine.count || j < theirs.count {
      let lo: Int32
      let hi: Int32
      if j == theirs.count || (i < mine.count && mine[i] <= theirs[j]) {
        (lo, hi) = (mine[i], mine[i + 1])
        i += 2
      } else {
        (lo, hi) = (theirs[j], theirs[j + 1])
        j += 2
      }
      guard hi > top else { continue }
      if lo <= top + 1 {
        // Continues the prefix or the last run.
        if merged.isEmpty { prefix = hi } else { merged[merged.count - 1] = hi }
        top = hi
      } else {
        if merged.isEmpty { prefix = top }
        merged.append(lo)
        merged.append(hi)
        top = hi
      }
    }
    if merged.isEmpty { prefix = max(prefix, top) }
    _runs = merged.isEmpty ? nil : merged
    _checkInvariants()
  }

  /// Moves the runs that continue or overlap the prefix into it.
  mutating func _absorb() {
    guard var runs = _runs, runs[0] <= prefix + 1 else { return }
    _runs = nil
    var k = 0
    while k < runs.count, runs[k] <= prefix + 1 {
      prefix = max(prefix, runs[k + 1])
      k += 2
    }
    runs.removeFirst(k)
    _runs = runs.isEmpty ? nil : runs
    _checkInvariants()
  }

  @inline(__always)
  func _checkInvariants() {
    #if DEBUG
      precondition(_max == (_runs?.last ?? prefix), "CausalContext: the inline maximum is stale")
      if let r = _runs {
        precondition(!r.isEmpty && r.count % 2 == 0, "CausalContext: runs must be pairs, and empty runs nil")
        precondition(r[0] > prefix + 1, "CausalContext: a run continues or overlaps the prefix")
        for k in stride(from: 0, to: r.count, by: 2) {
          precondition(r[k] <= r[k + 1], "CausalContext: a run ends before it starts")
          if k > 0 { precondition(r[k - 1] + 1 < r[k], "CausalContext: runs not sorted, disjoint and apart") }
        }
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
