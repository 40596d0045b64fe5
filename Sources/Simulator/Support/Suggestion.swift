/// "Did you mean …?" for every user-facing error: the closest candidate within a small edit
/// distance. Deterministic: ties go to the first candidate in the order given.
package enum Suggestion {
  /// The candidate nearest to `word` (case-insensitive optimal-string-alignment distance) if it
  /// is a plausible typo — distance ≤ 1 for short words, ≤ 2 otherwise — or else the only
  /// candidate that `word` (two or more characters) is a prefix of.
  ///
  /// Linear in the word's length per candidate (a band of the distance table): a 100 kB word
  /// against 20,000 file names took more than a minute with the whole table.
  package static func closest(to word: String, in candidates: [String]) -> String? {
    let lower = word.lowercased()
    let w = Array(lower)
    var best: (String, Int)?
    for candidate in candidates {
      let c = Array(candidate.lowercased())
      let limit = max(1, min(2, min(w.count, c.count) / 3))
      if let d = distance(w, c, atMost: limit), best == nil || d < best!.1 { best = (candidate, d) }
    }
    if best == nil, w.count >= 2 {
      let prefixed = candidates.filter { $0.count >= w.count && $0.lowercased().hasPrefix(lower) }
      if prefixed.count == 1 { return prefixed[0] }
    }
    return best?.0
  }

  /// The optimal-string-alignment distance of `a` and `b` (insertions, deletions, substitutions,
  /// adjacent swaps) when it is at most `k`, else nil; only the cells within `k` of the
  /// diagonal are computed (the others are more than `k`), so the time is O(`a.count` × `k`).
  package static func distance(_ a: [Character], _ b: [Character], atMost k: Int) -> Int? {
    let (n, m) = (a.count, b.count)
    guard abs(n - m) <= k else { return nil }
    if n == 0 || m == 0 { return max(n, m) }
    let far = k + 1  // stands for any distance beyond k
    var previous2 = [Int](repeating: far, count: m + 2)
    var previous = [Int](repeating: far, count: m + 2)
    var current = [Int](repeating: far, count: m + 2)
    for j in 0...min(m, k) { previous[j] = j }
    for i in 1...n {
      let (lo, hi) = (max(1, i - k), min(m, i + k))
      current[lo - 1] = lo == 1 ? min(i, far) : far
      var rowBest = current[lo - 1]
      for j in lo...hi {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        var d = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d = min(d, previous2[j - 2] + 1) }
        current[j] = min(d, far)
        rowBest = min(rowBest, current[j])
      }
      current[hi + 1] = far  // the next row reads it as its band's last cell above
      if rowBest > k { return nil }
      (previous2, previous, current) = (previous, current, previous2)
    }
    return previous[m] <= k ? previous[m] : nil
  }
}
