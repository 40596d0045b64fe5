import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// The words reports are made of are built by appending to one string; these pin them to the
/// plain formulations they replaced (character by character, joined from pieces), on text that
/// takes each path: short ASCII, a newline, a carriage return, non-ASCII, exactly 40 and 41
/// characters, grapheme clusters of several scalars.
@Suite struct VocabularyTests {
  /// The quoting as first written: characters, the cut after 37 of a longer string.
  static func plainQuote(_ s: String) -> String {
    var out = "\""
    var n = 0
    for ch in s {
      if n == 37, s.count > 40 {
        out += "…"
        break
      }
      if ch == "\n" { out += "\\n" } else { out.append(ch) }
      n += 1
    }
    return out + "\""
  }

  static let texts: [String] = [
    "", "t12", "a\"b", "two\nlines", "cr\r\nlf", "lone\rcr", "café", "e\u{301}", "👩‍👩‍👧 family", "tab\there",
    String(repeating: "x", count: 40), String(repeating: "x", count: 41), String(repeating: "y", count: 39) + "\n",
    String(repeating: "é", count: 41), String(repeating: "e\u{301}", count: 40), String(repeating: "ab", count: 30),
    String(repeating: "a", count: 36) + "\r\n" + "bcd",
  ]

  @Test func quotingIsTheCharacterWiseQuoting() throws {
    let result = ScenarioRunner.run(try Scenario.load("two-device-acceptance"))
    let words = Vocabulary(world: result.world, recordNames: result.recordNames)
    for s in Self.texts {
      #expect(words.quote(s) == Self.plainQuote(s), "\(s.debugDescription)")
      #expect(words.render(.string(s)) == Self.plainQuote(s), "\(s.debugDescription)")
    }
  }

  @Test func instantsReadAsBefore() {
    // The `< 1 day` branch, as it was written before it appended to one string.
    func plain(_ ns: Int64) -> String {
      let magnitude = ns.magnitude
      let rounded = (magnitude + 500_000) / 1_000_000
      let fraction = String(rounded % 1_000)
      return (ns < 0 ? "-" : "") + String(rounded / 1_000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "s"
    }
    for ns: Int64 in [
      500_000, 1_000_000, 9_000_000, 10_000_000, 99_499_999, 100_000_000, 999_999_999, 2_200_000_000, 94_327_123_456,
      86_399_999_000_000, -2_200_000_000, -500_000,
    ] {
      #expect(SimDuration(nanoseconds: ns).readable == plain(ns), "\(ns)")
    }
  }

  @Test func intentsAreDescribedAsBefore() throws {
    // Every intent of two named scenarios and of a few generated workloads (creates, sets,
    // appends, deletes), described whole and for each field.
    let appendOnly = try PolicySpec.parse("append-only").get()
    var files = [try Scenario.load("two-device-acceptance"), try Scenario.load("fat-note-lww")]
    for seed: UInt64 in 1...4 { files.append(WorkloadGenerator.generate(seed: seed, shape: WorkloadShape(), policy: appendOnly).file) }
    var verbs: Set<String> = []
    var ignoredLines = 0
    for file in files {
      let result = ScenarioRunner.run(file)
      let words = Vocabulary(world: result.world, recordNames: result.recordNames)
      // The report's lines for intents that had no effect, as first written.
      let names = result.world.config.deviceNames
      let ignored = result.world.log.intents.compactMap { i in
        i.ignored.map { "i\(i.id) (\(names[Int(i.device)]) \(i.kind.verb) \(result.recordNames[Int(i.record)]) at \(i.trueTime)): \($0)" }
      }
      #expect(result.report.ignored == ignored)
      // Lines kept as data until read compare and hash as the same lines set outright.
      var set = result.report
      set.ignored = ignored
      #expect(set == result.report && set.hashValue == result.report.hashValue)
      set.ignored = ignored.map { $0 + "." }
      #expect(ignored.isEmpty || set != result.report)
      ignoredLines += ignored.count
      for intent in result.world.log.intents {
        let noun: String
        switch intent.kind {
        case .create: noun = "create"
        case .delete: noun = "delete"
        default: noun = "edit"
        }
        verbs.insert(intent.kind.verb)
        let fields: [Int32?] = [nil, 0, 1, 2, 3]
        for field in fields {
          let what = plainWhat(words, intent, field: field)
          #expect(words.what(intent, field: field) == what)
          #expect(
            words.describe(intent, field: field)
              == "\(words.device(intent.device))'s \(noun) i\(intent.id) (\(what) at \(intent.trueTime))")
        }
      }
    }
    #expect(verbs.isSuperset(of: ["create", "set", "append", "delete"]), "\(verbs.sorted())")
    #expect(ignoredLines > 0)
  }

  /// `what` as first written, joined from pieces.
  func plainWhat(_ words: Vocabulary, _ intent: Intent, field: Int32?) -> String {
    let r = words.record(intent.record)
    let type = Int(words.type(of: intent.record) ?? 0)
    func name(_ f: Int32) -> String {
      type < words.schema.types.count && Int(f) < words.schema.types[type].fields.count ? words.schema.types[type].fields[Int(f)].name : "f\(f)"
    }
    switch intent.kind {
    case .create(_, let values):
      if let field, let v = values.first(where: { $0.field == field }) {
        return "create \(r) with \(name(field))=\(Self.plainRender(words, v.value))"
      }
      return "create \(r)"
    case .set(let values):
      let shown = values.filter { field == nil || $0.field == field }
      return "set " + shown.map { "\(r).\(name($0.field))=\(Self.plainRender(words, $0.value))" }.joined(separator: " ")
    case .append(let f, let text):
      return "append \(Self.plainQuote(text)) to \(r).\(name(f))"
    case .replace(let f, let old, let new, _):
      return "replace \(Self.plainQuote(old))→\(Self.plainQuote(new)) in \(r).\(name(f))"
    case .delete:
      return "delete \(r)"
    }
  }

  static func plainRender(_ words: Vocabulary, _ value: Value) -> String {
    switch value {
    case .string(let s): plainQuote(s)
    case .text(let t): plainQuote(t.string)
    default: words.render(value)
    }
  }
}
