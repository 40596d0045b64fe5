import Scenarios

/// `sim-cli compare` as text: a row per scenario, a column per policy (`P1`, `P2`, …), split into
/// as many tables as it takes to keep every line within `width` columns, then a legend.
///
///     scenario          P1       P2
///     ----------------  -------  -----
///     different-fields  20: 20L      ·
///     fuzz:default       8: 9L       ·
///     ----------------  -------  -----
///     all               28: 29L      ·
///
/// A cell is the number of seeds with a violation, then the violations by kind summed over the
/// seeds (`4L 1R`: four lost edits, one resurrection); `·` when no seed had any. A `from` column
/// says where each scenario comes from when they do not all come from the same place.
struct CompareTextTable {
  /// The policies' specs, in column order.
  var policies: [String]
  /// The rows: each subject's name and origin (`built-in`, `./scenarios/`, `file`, `workload`).
  var subjects: [(name: String, origin: String)]
  /// Policy-major, as ``CompareCommand/compare(policies:subjects:seeds:jobs:progress:)`` returns them.
  var cells: [Comparison.Cell]
  var seeds: ClosedRange<UInt64>
  /// The widest line, in characters.
  var width = 100

  /// Longer scenario names and origins are cut, with `…`.
  static let maxNameWidth = 32
  static let maxOriginWidth = 20

  /// The letter of each violation kind in a cell; nil for the kinds that are not violations.
  static func code(_ kind: AnomalyKind) -> String? {
    switch kind {
    case .lostEdit: "L"
    case .staleOverwrite: "O"
    case .resurrection: "R"
    case .droppedEvent: "D"
    case .duplicateEvent: "U"
    case .strandedRecord: "S"
    case .divergence: "V"
    case .phantomValue: "H"
    case .stalledSync: "T"
    case .danglingReference: "F"
    case .logicalDuplicate: "Q"
    case .accessLeak: "A"
    case .missingAsset: "M"
    case .concurrentOverwrite, .deleteUpdateConflict: nil
    }
  }

  /// `4L 1R`: the violation counts by kind, in kind order, zeros left out.
  static func kinds(_ counts: [Int]) -> String {
    AnomalyKind.allCases.compactMap { kind in
      guard let code = code(kind), kind.ordinal < counts.count, counts[kind.ordinal] > 0 else { return nil }
      return "\(counts[kind.ordinal])\(code)"
    }.joined(separator: " ")
  }

  func cell(policy: Int, subject: Int) -> Comparison.Cell? {
    let index = policy * subjects.count + subject
    return index < cells.count ? cells[index] : nil
  }

  /// Every subject's cells for `policy` summed: runs with a violation, violations by kind.
  func total(policy: Int) -> (failing: Int, counts: [Int]) {
    var failing = 0
    var counts = [Int](repeating: 0, count: AnomalyKind.allCases.count)
    for s in subjects.indices {
      guard let c = cell(policy: policy, subject: s) else { continue }
      failing += c.failingSeeds
      for (i, n) in c.counts.enumerated() where i < counts.count { counts[i] += n }
    }
    return (failing, counts)
  }

  /// One policy's column: its heading and a cell per subject, aligned on the number of failing
  /// seeds.
  func column(_ policy: Int) -> [String] {
    let parts = subjects.indices.map { s in
      let c = cell(policy: policy, subject: s)
      return (failing: c?.failingSeeds ?? 0, kinds: Self.kinds(c?.counts ?? []))
    }
    return ["P\(policy + 1)"] + Self.aligned(parts)
  }

  /// `20: 20L`, ` 8: 9L`, `  ·`: counts of failing seeds (or runs) and kinds, the counts right-aligned.
  static func aligned(_ parts: [(failing: Int, kinds: String)]) -> [String] {
    let numbers = parts.map { $0.failing == 0 && $0.kinds.isEmpty ? "·" : String($0.failing) }
    let numberWidth = numbers.map(\.count).max() ?? 1
    return zip(numbers, parts).map { number, part in
      padLeft(number, numberWidth) + (part.kinds.isEmpty ? "" : ": " + part.kinds)
    }
  }

  /// The table text: a title line, the tables, the legend.
  func rendered() -> String {
    let seedCount = cells.first?.seeds ?? 0
    let seedText = seeds.lowerBound == seeds.upperBound ? "seed \(seeds.lowerBound)" : "seeds \(seeds.lowerBound)..\(seeds.upperBound)"
    var out = Self.wrap("Violations by scenario and policy over \(seedText) (\(seedCount) run\(seedCount == 1 ? "" : "s") per cell)", width: width)
    for chunk in chunks() { out += "\n" + table(chunk) }
    out += "\n" + policyLegend(seedCount: seedCount) + "\n" + cellLegend(seedCount: seedCount)
    return out
  }

  /// The label column, and the origin column when the subjects come from more than one place.
  func labels() -> (names: [String], origins: [String]?) {
    let names = ["scenario"] + subjects.map { Self.cut($0.name, Self.maxNameWidth, fromStart: false) }
    var origins: [String]? = nil
    var distinct: [String] = []
    for s in subjects where s.origin != "workload" && !distinct.contains(s.origin) { distinct.append(s.origin) }
    if distinct.count > 1 {
      origins = ["from"] + subjects.map { Self.cut($0.origin, Self.maxOriginWidth, fromStart: true) }
    }
    return (names, origins)
  }

  /// The policies of each table: as few tables as fit `width`, with as even a number of
  /// columns as that allows.
  func chunks() -> [[Int]] {
    let (names, origins) = labels()
    let fixed = (names.map(\.count).max() ?? 0) + (origins.map { ($0.map(\.count).max() ?? 0) + 2 } ?? 0)
    let widths = policies.indices.map { column($0).map(\.count).max() ?? 0 }
    func split(atMost cap: Int) -> [[Int]] {
      var chunks: [[Int]] = []
      var current: [Int] = []
      var used = fixed
      for p in policies.indices {
        if !current.isEmpty && (used + 2 + widths[p] > width || current.count == cap) {
          chunks.append(current)
          current = []
          used = fixed
        }
        current.append(p)
        used += 2 + widths[p]
      }
      if !current.isEmpty { chunks.append(current) }
      return chunks
    }
    let greedy = split(atMost: Int.max)
    guard greedy.count > 1 else { return greedy }
    // As few tables as the greedy split, as even as they can be made (wide columns may keep
    // them from being equal).
    let k = greedy.count
    var best = greedy
    var spread = (greedy.map(\.count).max() ?? 0) - (greedy.map(\.count).min() ?? 0)
    for cap in (policies.count + k - 1) / k..<policies.count where spread > 1 {
      let even = split(atMost: cap)
      let sizes = even.map(\.count)
      if even.count == k, (sizes.max() ?? 0) - (sizes.min() ?? 0) < spread {
        best = even
        spread = (sizes.max() ?? 0) - (sizes.min() ?? 0)
      }
    }
    return best
  }

  /// One table: a heading and a row per subject.
  func table(_ chunk: [Int]) -> String {
    let (names, origins) = labels()
    var columns = [names.map { Self.padRight($0, names.map(\.count).max() ?? 0) }]
    if let origins { columns.append(origins.map { Self.padRight($0, origins.map(\.count).max() ?? 0) }) }
    for p in chunk {
      let column = column(p)
      let w = column.map(\.count).max() ?? 0
      columns.append(column.map { Self.padRight($0, w) })
    }
    return names.indices.map { r in Self.trimmed(columns.map { $0[r] }.joined(separator: "  ")) + "\n" }.joined()
  }

  /// What `P1`… stand for, each with its totals over the scenarios: runs with a violation and
  /// violations by kind.
  func policyLegend(seedCount: Int) -> String {
    let runs = seedCount * subjects.count
    var out = Self.wrap(
      "Policies, with their totals over the \(subjects.count) scenario\(subjects.count == 1 ? "" : "s") (\(runs) run\(runs == 1 ? "" : "s") per policy, read like a cell):",
      width: width)
    let keys = policies.indices.map { "P\($0 + 1)" }
    let keyWidth = keys.map(\.count).max() ?? 0
    let totals = Self.aligned(
      policies.indices.map { p in
        let sum = total(policy: p)
        return (sum.failing, Self.kinds(sum.counts))
      })
    let totalWidth = totals.map(\.count).max() ?? 0
    // A spec too long to share its line with the totals gets lines of its own.
    let specWidth = min(policies.map(\.count).max() ?? 0, max(12, width - keyWidth - totalWidth - 6))
    for (p, spec) in policies.enumerated() {
      let lead = "  " + Self.padRight(keys[p], keyWidth) + "  "
      if spec.count <= specWidth {
        out += Self.trimmed(lead + Self.padRight(spec, specWidth) + "  " + totals[p]) + "\n"
      } else {
        out += Self.wrap(lead + spec, width: width, indent: String(repeating: " ", count: lead.count))
        out += Self.trimmed(String(repeating: " ", count: lead.count + specWidth + 2) + totals[p]) + "\n"
      }
    }
    return out
  }

  /// What a cell says, and the kind letters.
  func cellLegend(seedCount: Int) -> String {
    let seedWord = seedCount == 1 ? "seed" : "seeds"
    var out = Self.wrap(
      "A cell: \(seedWord) with a violation (of \(seedCount)): violations by kind summed over the \(seedWord); · = none.", width: width)
    out += Self.wrap("For example '2: 3L 1R' = 2 \(seedWord) with a violation; 3 lost edits and 1 resurrection in all.", width: width)
    let codes = AnomalyKind.allCases.compactMap { kind in Self.code(kind).map { "\($0) \(kind.rawValue)" } }
    out += Self.wrap("Kinds: " + codes.joined(separator: " · "), width: width, indent: "       ", separator: " · ")
    return out
  }

  static func padRight(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
  static func padLeft(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }

  static func trimmed(_ line: String) -> String {
    var line = line
    while line.last == " " { line.removeLast() }
    return line
  }

  /// `text` cut to `limit` characters with `…`, keeping its start, or its end from a `/` on
  /// (`fromStart`, for folders: `…/Tests/scenarios/`).
  static func cut(_ text: String, _ limit: Int, fromStart: Bool) -> String {
    guard text.count > limit else { return text }
    guard fromStart else { return text.prefix(limit - 1) + "…" }
    let end = text.suffix(limit - 1)
    let slash = end.dropLast().firstIndex(of: "/")
    return "…" + (slash.map { end[$0...] } ?? end)
  }

  /// `text` in lines of at most `width` characters, broken at `separator`, later lines indented;
  /// a piece longer than a line is broken where the line ends.
  static func wrap(_ text: String, width: Int, indent: String = "", separator: String = " ") -> String {
    var lines: [String] = []
    var line = ""
    for piece in text.components(separatedBy: separator) {
      let candidate = line.isEmpty ? (lines.isEmpty ? piece : indent + piece) : line + separator + piece
      if candidate.count <= width || line.isEmpty {
        line = candidate
      } else {
        lines.append(line)
        line = indent + piece
      }
    }
    lines.append(line)
    var out = ""
    for var line in lines {
      while line.count > width {
        out += Self.trimmed(String(line.prefix(width))) + "\n"
        line = indent + line.dropFirst(width)
        if indent.count >= width { line = String(line.dropFirst(indent.count)) }
      }
      out += Self.trimmed(line) + "\n"
    }
    return out
  }
}
