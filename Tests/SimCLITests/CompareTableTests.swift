import Foundation
import Replica
import Testing

@testable import Scenarios
@testable import SimCLI

/// `sim-cli compare` as text: within 100 columns whatever the default comparison finds, with a
/// legend; markdown and JSON as they were.
@Suite struct CompareTableTests {
  /// How full the synthetic cells are.
  enum Load: String, CaseIterable, CustomTestStringConvertible {
    /// Nothing found anywhere.
    case clean
    /// What the default comparison finds today: most cells one kind, a few four.
    case realistic
    /// Every violation kind in every cell, with three-digit counts.
    case worst
    var testDescription: String { rawValue }
  }

  /// The default comparison's shape — every preset × every built-in scenario and the fuzz
  /// workload, seeds 1..20 — with made-up cells.
  static func defaultSized(_ load: Load, origins: [String]? = nil) -> CompareTextTable {
    let policies = PolicyPreset.all.map(\.name)
    let names = Scenario.builtInNames + ["fuzz:default"]
    let subjects = names.enumerated().map { i, name in
      (name: name, origin: i == names.count - 1 ? "workload" : origins?[i % origins!.count] ?? "built-in")
    }
    var cells: [Comparison.Cell] = []
    for (p, policy) in policies.enumerated() {
      for (s, subject) in subjects.enumerated() {
        var counts = [Int](repeating: 0, count: AnomalyKind.allCases.count)
        var failing = 0
        switch load {
        case .clean: break
        case .realistic:
          // Like today's findings: a kind or none per scenario; on the fuzz workload two
          // kinds under a few policies, four under two of them.
          if (p + s) % 3 == 0 {
            failing = 20
            counts[(p * 7 + s) % 8] = 20
          }
          if s == subjects.count - 1 && [1, 3].contains(p) {
            failing = 14
            counts = [18, 12, 0, 0, 0, 0, 0, 0, 3, 1]
          }
          if s == subjects.count - 1 && [9, 10].contains(p) {
            failing = 13
            counts = [18, 0, 8, 0, 0, 29, 6, 0, 2, 0]
          }
        case .worst:
          failing = 20
          for k in 0..<8 { counts[k] = 999 }
        }
        cells.append(Comparison.Cell(policy: policy, scenario: subject.name, seeds: 20, failingSeeds: failing, counts: counts))
      }
    }
    return CompareTextTable(policies: policies, subjects: subjects, cells: cells, seeds: 1...20)
  }

  static func overlong(_ text: String, limit: Int = 100) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { $0.count > limit || $0.unicodeScalars.count > limit }
  }

  @Test(arguments: Load.allCases)
  func everyLineOfTheDefaultSizedTableFitsInAHundredColumns(load: Load) {
    let text = Self.defaultSized(load).rendered()
    #expect(Self.overlong(text).isEmpty, "\(Self.overlong(text))")
    #expect(!text.split(separator: "\n").contains { $0.hasSuffix(" ") }, "no trailing spaces")
  }

  @Test func anOriginColumnLongNamesAndLongPolicySpecsStillFit() {
    var table = Self.defaultSized(.realistic, origins: ["built-in", "./scenarios/", "/home/someone/projects/notes/Tests/scenarios/"])
    table.policies[0] = "field-lww-hlc delete=hard retention=7d " + String(repeating: "granularity=field ", count: 8)
    table.subjects[0].name = "a-scenario-name-far-longer-than-any-column-should-be-allowed-to-grow"
    let text = table.rendered()
    #expect(Self.overlong(text).isEmpty, "\(Self.overlong(text))")
    #expect(text.contains("from"))
    #expect(text.contains("…/Tests/scenarios/"))
    #expect(text.contains("a-scenario-name-far-longer-than…"))
  }

  @Test func theDefaultSizedTableIsSplitIntoEvenTablesAndKeepsToAScreen() {
    let table = Self.defaultSized(.realistic)
    let chunks = table.chunks()
    #expect(chunks.flatMap { $0 } == Array(table.policies.indices))
    #expect(chunks.count == 6, "\(table.rendered())")
    // Wide columns (cells with four kinds, here in P7…P11) can keep the tables from being
    // equal: the fewest tables that fit come first, then the evenest of those.
    #expect((chunks.map(\.count).max() ?? 0) - (chunks.map(\.count).min() ?? 0) <= 3, "\(chunks)")
  }

  @Test func theLegendNamesEveryPolicyWithItsTotalsAndEveryKind() {
    let text = Self.defaultSized(.realistic).rendered()
    for (i, preset) in PolicyPreset.all.enumerated() {
      #expect(text.split(separator: "\n").contains { $0.hasPrefix("  P\(i + 1) ") && $0.contains(" \(preset.name) ") })
    }
    for kind in AnomalyKind.allCases where kind.isViolation {
      #expect(text.contains("\(CompareTextTable.code(kind)!) \(kind.rawValue)"))
    }
    #expect(text.contains("A cell: seeds with a violation (of 20)"))
    #expect(text.contains("· = none"))
    #expect(text.contains("(\((Scenario.builtInNames.count + 1) * 20) runs per policy, read like a cell)"))
  }

  @Test func aCellIsFailingSeedsThenCountsByKind() {
    var counts = [Int](repeating: 0, count: AnomalyKind.allCases.count)
    #expect(CompareTextTable.kinds(counts) == "")
    counts[AnomalyKind.lostEdit.ordinal] = 3
    counts[AnomalyKind.resurrection.ordinal] = 1
    counts[AnomalyKind.concurrentOverwrite.ordinal] = 5  // not a violation: not shown
    #expect(CompareTextTable.kinds(counts) == "3L 1R")
    #expect(CompareTextTable.aligned([(2, "3L 1R"), (0, ""), (13, "1S")]) == [" 2: 3L 1R", " ·", "13: 1S"])
    // Every violation kind has its own letter.
    let codes = AnomalyKind.allCases.compactMap(CompareTextTable.code)
    #expect(codes.count == AnomalyKind.allCases.filter(\.isViolation).count)
    #expect(Set(codes).count == codes.count)
  }

  @Test func theOriginColumnAppearsOnlyWhenScenariosComeFromSeveralPlaces() {
    #expect(!Self.defaultSized(.clean).rendered().contains("from"))
    let mixed = Self.defaultSized(.clean, origins: ["built-in", "./scenarios/"]).rendered()
    #expect(mixed.contains("scenario                     from"))
    #expect(mixed.contains("fuzz:default                 workload"))
  }

  @Test func aSmallRealComparisonFitsAndHasItsLegend() {
    let r = runCLI(
      "compare", "--scenario", "different-fields", "--scenario", "default", "--policies", "cloudkit-default,crdt", "--seeds", "1..2")
    #expect(r.code == .success, "\(r.stderr)")
    #expect(Self.overlong(r.stdout).isEmpty)
    let lines = r.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "Violations by scenario and policy over seeds 1..2 (2 runs per cell)")
    #expect(lines.contains("scenario          P1        P2"))
    #expect(lines.contains("different-fields  2: 2L     ·"))
    // cloudkit-default names records at random: the settings singleton the seed draws is made twice.
    #expect(lines.contains("fuzz:default      1: 1L 1Q  ·"))
    #expect(lines.contains("  P1  cloudkit-default  3: 3L 1Q"))
    #expect(lines.contains("  P2  crdt              ·"))
  }

  /// `--format markdown` as the tool printed it before the text table changed (plus the
  /// `stalled-sync`, `dangling-reference`, `logical-duplicate`, `access-leak` and `missing-asset` columns since the
  /// oracle learned those kinds).
  @Test func markdownIsUnchanged() {
    let r = runCLI(
      "compare", "--scenario", "different-fields", "--scenario", "default", "--policies", "cloudkit-default,crdt", "--seeds", "1..2",
      "--format", "markdown")
    #expect(r.code == .success, "\(r.stderr)")
    #expect(
      r.stdout == """
        **% of seeds with a violation** (2 seeds each)

        | policy           | different-fields | fuzz:default |
        | ---------------- | ---------------: | -----------: |
        | cloudkit-default |             100% |          50% |
        | crdt             |                0 |            0 |

        **Violations by kind** (summed over scenarios and seeds)

        | policy           | lost-edit | stale-overwrite | resurrection | dropped-event | duplicate-event | stranded-record | divergence | phantom-value | stalled-sync | dangling-reference | logical-duplicate | access-leak | missing-asset |
        | ---------------- | --------: | --------------: | -----------: | ------------: | --------------: | --------------: | ---------: | ------------: | -----------: | -----------------: | ----------------: | ----------: | ------------: |
        | cloudkit-default |         3 |               0 |            0 |             0 |               0 |               0 |          0 |             0 |            0 |                  0 |                 1 |           0 |             0 |
        | crdt             |         0 |               0 |            0 |             0 |               0 |               0 |          0 |             0 |            0 |                  0 |                 0 |           0 |             0 |

        """)
  }

  /// `--format json` as before, plus each cell's `origin`.
  @Test func jsonIsUnchangedButForTheOrigin() throws {
    let r = runCLI(
      "compare", "--scenario", "different-fields", "--scenario", "default", "--policies", "cloudkit-default,crdt", "--seeds", "1..2",
      "--format", "json")
    #expect(r.code == .success, "\(r.stderr)")
    let withoutOrigin = r.stdout.replacingOccurrences(of: #""origin":"[^"]*","#, with: "", options: .regularExpression)
    let before = """
      [{"counts":{"access-leak":0,"concurrent-overwrite":0,"dangling-reference":0,"delete-update-conflict":0,"divergence":0,"dropped-event":0,"duplicate-event":0,\
      "logical-duplicate":0,"lost-edit":2,"missing-asset":0,"phantom-value":0,"resurrection":0,"stale-overwrite":0,"stalled-sync":0,"stranded-record":0},\
      "failingSeeds":2,"policy":"cloudkit-default","scenario":"different-fields","seeds":2},{"counts":{"access-leak":0,"concurrent-overwrite":3,\
      "dangling-reference":0,"delete-update-conflict":1,"divergence":0,"dropped-event":0,"duplicate-event":0,"logical-duplicate":1,"lost-edit":1,\
      "missing-asset":0,"phantom-value":0,"resurrection":0,"stale-overwrite":0,"stalled-sync":0,"stranded-record":0},"failingSeeds":1,"policy":"cloudkit-default",\
      "scenario":"fuzz:default","seeds":2},{"counts":{"access-leak":0,"concurrent-overwrite":0,"dangling-reference":0,"delete-update-conflict":0,"divergence":0,\
      "dropped-event":0,"duplicate-event":0,"logical-duplicate":0,"lost-edit":0,"missing-asset":0,"phantom-value":0,"resurrection":0,"stale-overwrite":0,\
      "stalled-sync":0,"stranded-record":0},"failingSeeds":0,"policy":"crdt","scenario":"different-fields","seeds":2},{"counts":\
      {"access-leak":0,"concurrent-overwrite":3,"dangling-reference":0,"delete-update-conflict":1,"divergence":0,"dropped-event":0,"duplicate-event":0,\
      "logical-duplicate":0,"lost-edit":0,"missing-asset":0,"phantom-value":0,"resurrection":0,"stale-overwrite":0,"stalled-sync":0,"stranded-record":0},\
      "failingSeeds":0,"policy":"crdt","scenario":"fuzz:default","seeds":2}]

      """
    #expect(withoutOrigin == before)
    let cells = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
    #expect(cells.map { $0["origin"] as? String == "workload" } == [false, true, false, true])
  }
}

/// The progress line: in place on a terminal, a few lines at most elsewhere.
@Suite struct CompareProgressTests {
  final class Sink: @unchecked Sendable {
    let lock = NSLock()
    var text = ""
    var now = 0.0
    func write(_ s: String) { lock.withLock { text += s } }
    func time() -> Double { lock.withLock { now } }
    func advance(to t: Double) { lock.withLock { now = t } }
  }

  static func progress(_ style: CompareProgress.Style, total: Int, sink: Sink) -> CompareProgress {
    CompareProgress(total: total, seedsPerRun: 20, style: style, write: { sink.write($0) }, elapsed: { sink.time() })
  }

  @Test func offATerminalAQuickComparisonWritesNothing() {
    let sink = Sink()
    let progress = Self.progress(.lines, total: 169, sink: sink)
    progress.start()
    for _ in 0..<169 { progress.tick() }
    progress.finish()
    #expect(sink.text == "")
  }

  @Test func offATerminalASlowComparisonWritesAtMostThreeLines() {
    let sink = Sink()
    let progress = Self.progress(.lines, total: 169, sink: sink)
    progress.start()
    for i in 0..<169 {
      sink.advance(to: Double(i))
      progress.tick()
    }
    progress.finish()
    #expect(
      sink.text == "comparing: 43/169 runs of 20 seeds (42s)\ncomparing: 85/169 runs of 20 seeds (84s)\ncomparing: 127/169 runs of 20 seeds (126s)\n")
    #expect(!sink.text.contains("\r"))
  }

  @Test func onATerminalOneLineIsRewrittenAndErasedAtTheEnd() {
    let sink = Sink()
    let progress = Self.progress(.terminal, total: 4, sink: sink)
    progress.start()
    for i in 1...4 {
      sink.advance(to: Double(i))
      progress.tick()
    }
    progress.finish()
    #expect(!sink.text.contains("\n"))
    #expect(sink.text.hasPrefix("\r\u{1B}[Kcomparing: 0/4 runs of 20 seeds…\r\u{1B}[Kcomparing: 1/4 runs of 20 seeds…"))
    #expect(sink.text.hasSuffix("\r\u{1B}[Kcomparing: 4/4 runs of 20 seeds…\r\u{1B}[K"))
  }

  @Test func aCapturingConsoleNeverGetsTheInPlaceLine() {
    let (console, _) = Console.capturing()
    #expect(!console.stderrIsTerminal)
    let r = runCLI("compare", "--scenario", "fat-note-lww", "--policies", "crdt", "--seeds", "1..1")
    #expect(r.code == .success)
    #expect(!r.stderr.contains("\u{FFFD}") && !r.stderr.contains("\r"))
  }
}
