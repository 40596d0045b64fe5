/// "Did you mean …?" for every user-facing error: the closest candidate within a small edit
/// distance. Deterministic: ties go to the first candidate in the order given.
package enum Suggestion {
  /// The candidate nearest to `word` (case-insensitive optimal-string-alignment distance) if it
  /// is a plausible typo — distance ≤ 1 for short words, ≤ 2 otherwise — or else the only
  /// candidate that `word` (two or more characters) is a prefix of.
  package static func closest(to word: String, in candidates: [String]) -> String? {
    let w = Array(word.lowercased())
    var best: (String, Int)?
    for candidate in candidates {
      let d = distance(w, Array(candidate.lowercased()))
      let limit = max(1, min(2, min(w.count, candidate.count) / 3))
      if d <= limit, best == nil || d < best!.1 { best = (candidate, d) }
    }
    if best == nil, w.count >= 2 {
      let prefixed = candidates.filter { $0.lowercased().hasPrefix(word.lowercased()) }
      if prefixed.count == 1 { return prefixed[0] }
    }
    return best?.0
  }

  /// Optimal-string-alignment distance: insertions, deletions, substitutions, adjacent swaps.
  package static func distance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous2 = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          current[j] = min(current[j], previous2[j - 2] + 1)
        }
      }
      (previous2, previous, current) = (previous, current, previous2)
    }
    return previous[b.count]
  }
}
