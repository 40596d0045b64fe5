import Foundation
import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// Scenario texts shared by the scenario-format tests.
enum Fixtures {
  /// The example of `scenario-format.md`, verbatim.
  static let twoDeviceAcceptance = """
    scenario two-device-acceptance
    about "Both devices offline; appends on each, the same preference on both; then online."

    devices iPad phone
    policy append-only
    seed 1

    latency 20ms..300ms
    loss 1%
    clock phone skew +2s drift 40ppm
    retention 30d

    type Note
      title: string = "" mutable
      body: text = ""
    type Stroke append-only
      note: ref Note?
      points: string = ""
    type Preference
      value: string = "light" mutable

    at 0s    iPad  create Note n1 title="Sermon" body="In the beginning"
    at 0s    iPad  create Preference theme
    at 1s    sync
    at 2s    offline iPad phone
    at 3s    iPad  create Stroke s1 note=n1 points="a"
    at 3s    phone create Stroke s2 note=n1 points="b"
    at 4s    iPad  set theme value="dark"
    at 4.5s  phone set theme value="sepia"
    at 10s   online iPad phone
    settle

    expect no violations
    expect theme.value in "dark" "sepia"

    """

  /// Every statement and every expectation at least once, lines out of time order.
  static let kitchenSink = #"""
    # Every statement at least once.
    scenario kitchen-sink
    about "Every statement, \"quoted\" and \\ escaped,\nacross lines."
    devices mac iPad phone watch
    policy field-lww-hlc delete=tombstone retention=7d
    seed 18446744073709551615
    latency 5ms
    loss 0.5%
    duplicate 2%
    clock phone skew -1.5s drift -40ppm
    clock iPad skew 250ms
    clock watch skew +0s drift 12 ppm
    retention 45d
    autosync off
    push 90%
    deployed Note Tag Event Empty

    type Note
      title: string? mutable
      body: text = "draft"
      rank: int = -7 unique
      pinned: bool = false mutable
      due: date? = 1.5h
      tag: ref Tag?
    type Tag
      label: string = "none"
    type Event append-only
      note: ref Note
      at: date
    type Empty

    at 10s mac delete t1
    at 0s mac create Tag t1 label="work"
    at 0s mac create Note n1 title="Plan" tag=t1 rank=3 pinned=true due=2d
    at 250ms iPad create Event e1 note=n1 at=1s
    at 1s sync
    at 2s phone sync
    at 2s offline phone watch
    at 3s mac set n1 title="Plan B" pinned=false
    at 3s phone append n1.body " more"
    at 4s phone replace n1.body "draft" "final"
    at 5s server down
    at 6s watch kill
    at 6s watch background 30s
    at 7s iPad clock -2s
    at 7s mac clock 500ms
    at 8s server up
    at 9s online phone watch
    at 20s settle

    expect no violations
    expect no lost-edit
    expect stale-overwrite == 0
    expect divergence <= 1
    expect concurrent-overwrite >= 0
    expect converged
    expect n1.title == "Plan B"
    expect n1.rank == 3
    expect n1.pinned in true false
    expect n1.due == 2d
    expect n1.tag == t1
    expect e1 exists
    expect t1 deleted

    """#

  /// A fat mutable note under record-level LWW, no settle, no header beyond devices.
  static let fatNote = """
    scenario fat-note-lww
    devices iPad phone
    type Note
      title: string = "" mutable
      body: text = ""
    at 0s iPad create Note n1 body="In teh beginning"
    at 1s sync
    at 2s offline iPad phone
    at 3s iPad replace n1.body "teh" "the"
    at 3s phone append n1.body " God created"
    at 3s phone set n1 title="Genesis"
    at 5s online iPad phone
    expect lost-edit == 0

    """

  /// A byte-order mark, `\r\n` endings, tabs, comments, Unicode in strings, odd spacing.
  static let oddButValid =
    "\u{FEFF}# odd but valid\r\n"
    + "scenario \"spaces and ünïcødé 🎉\"\r\n"
    + "devices\tiPad\tphone   # trailing comment\r\n"
    + "\r\n"
    + "type Note\r\n"
    + "\ttitle:string=\"é#not a comment\" mutable\r\n"
    + "\tbody : text =\"👩‍👩‍👧\"\r\n"
    + "  # a comment inside the type\r\n"
    + "\tcount: int?\r\n"
    + "at 1s\tiPad\tcreate Note n1 title=\"ça \\\"va\\\"\\n\" body=\"x\"\r\n"
    + "at 0.5s phone create Note n2 count=-9223372036854775808\r\n"
    + "settle\r\n"
    + "expect n1.title == \"ça \\\"va\\\"\\n\"   # comment\r\n"

  /// Every CloudKit-surface statement and timeline line.
  static let cloudKit = """
    devices iPad phone mac
    policy field-lww-hlc retry=transient retry-after=honour split=on zone-deleted=follow
    quota 5GB used 4.9GB
    throttle device 10/1m app 100/1m
    zone atomic
    limits 400 records 2MB
    type Note
      title: string = "" mutable
    at 0s iPad create Note n1 title="a"
    at 0s phone create Note n2
    at 1s reject n1 n2 with zoneBusy retry-after 30s for 1m
    at 2s reject n1 with serverResponseLost for 10s
    at 3s free 250KB
    at 4s mac delete-zone
    at 5s phone purge-zone
    at 6s encrypted-data-reset
    at 7s mac sign-out
    at 8s mac sign-in icloud
    at 9s phone switch-account icloud
    settle
    expect stalled-sync == 0
    """

  /// The smallest valid scenario.
  static let minimal = "devices solo\n"

  /// Every valid scenario above, with a name for messages.
  static let all: [(name: String, text: String)] = [
    ("two-device-acceptance", twoDeviceAcceptance), ("kitchen-sink", kitchenSink), ("fat-note-lww", fatNote),
    ("odd-but-valid", oddButValid), ("minimal", minimal), ("cloudkit", cloudKit),
  ]

  /// The lines of the fenced block of a document (`docs/NAME.md`) under its marker
  /// `<!-- output checked by TEST -->`, where `scripts/check-docs` leaves the block to this test.
  static func documentBlock(_ document: String, checkedBy test: String, filePath: String = #filePath) throws -> [String] {
    let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let data = try #require(FileManager.default.contents(atPath: root.appendingPathComponent(document).path))
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let marker = try #require(lines.firstIndex(of: "<!-- output checked by \(test) -->"), "no block of \(document) is checked by \(test)")
    let open = try #require(lines[marker...].firstIndex { $0.hasPrefix("```") })
    let close = try #require(lines[(open + 1)...].firstIndex { $0.hasPrefix("```") })
    return Array(lines[(open + 1)..<close])
  }

  /// Named scenarios in the repository's `scenarios/` folder, if any.
  static func repositoryScenarios(filePath: String = #filePath) -> [(name: String, text: String)] {
    let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let folder = root.appendingPathComponent("scenarios")
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
    return names.filter { $0.hasSuffix(".scenario") }.sorted().compactMap { name in
      guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else { return nil }
      return (name, String(decoding: data, as: UTF8.self))
    }
  }
}

// MARK: - Helpers

/// Parses and fails the test with the diagnostics when the text does not parse.
func parsed(_ text: String, source: String = "test.scenario") throws -> ScenarioFile {
  switch ScenarioParser.parse(text, source: source) {
  case .success(let file): return file
  case .failure(let errors): throw ParseFailure(rendered: errors.rendered())
  }
}

struct ParseFailure: Error, CustomStringConvertible {
  var rendered: String
  var description: String { rendered }
}

/// The rendered diagnostics of a text that must not parse ("parsed" if it did).
func rendered(_ text: String, source: String = "test.scenario") -> String {
  switch ScenarioParser.parse(text, source: source) {
  case .success: return "parsed"
  case .failure(let errors): return errors.rendered()
  }
}

/// The messages only.
func messages(_ text: String) -> [String] {
  switch ScenarioParser.parse(text, source: "test.scenario") {
  case .success: return []
  case .failure(let errors): return errors.diagnostics.map(\.message)
  }
}

/// A small valid file with a slot for the line under test, line 7: after the types (so a field
/// line continues `Stroke`) and before the timeline (so a header line is in place).
func withLine(_ line: String) -> String {
  """
  devices iPad phone
  type Note
    title: string = "" mutable
    body: text = ""
  type Stroke append-only
    note: ref Note?
  \(line)
  at 0s iPad create Note n1
  at 0s iPad create Stroke s1
  """
}

extension ScenarioFile {
  /// The file with its source and every location cleared, for round-trip comparisons.
  var withoutLocations: ScenarioFile {
    var f = self
    let zero = SourceLocation(line: 0, column: 0)
    f.source = ""
    f.policyLocation = nil
    f.schemaLines = [:]
    f.origin = .code
    f.clocks = clocks.map {
      var c = $0
      c.location = zero
      return c
    }
    f.accounts = accounts.map {
      var a = $0
      a.location = zero
      return a
    }
    f.appVersions = appVersions.map {
      var v = $0
      v.location = zero
      return v
    }
    f.expectations = expectations.map {
      var e = $0
      e.location = zero
      return e
    }
    f.timeline = timeline.map { entry in
      var e = entry
      e.location = zero
      func clear(_ fields: [Assignment]) -> [Assignment] {
        fields.map {
          var a = $0
          a.location = zero
          return a
        }
      }
      switch e.action {
      case .create(let d, let t, let id, let fields): e.action = .create(device: d, type: t, id: id, fields: clear(fields))
      case .set(let d, let id, let fields): e.action = .set(device: d, id: id, fields: clear(fields))
      default: break
      }
      return e
    }
    return f
  }
}

/// `Testing` has a `SourceLocation` too.
typealias Loc = Scenarios.SourceLocation
