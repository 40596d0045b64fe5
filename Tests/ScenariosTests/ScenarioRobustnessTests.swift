import Foundation
import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// The parser never crashes, traps or hangs, whatever it is given; every failure points into
/// the file; every success writes back to an equal file.
@Suite struct ScenarioRobustnessTests {
  /// `swift test` gives each fixture 20 mutations and each named scenario 25; the nightly run
  /// (`SIM_NIGHTLY=1`, `scripts/nightly`) 200 and 1,000, as the robustness issue asks.
  static let nightly = ProcessInfo.processInfo.environment["SIM_NIGHTLY"] == "1"
  static let corpus =
    Fixtures.all.map { ($0.name, $0.text, nightly ? 200 : 20) }
    + Fixtures.repositoryScenarios().map { ($0.name, $0.text, nightly ? 1_000 : 25) }

  @Test(arguments: corpus.map(\.0))
  func aThousandMutationsOfAValidScenarioNeverCrashAndAlwaysPointIntoTheFile(name: String) throws {
    let (_, text, rounds) = try #require(Self.corpus.first { $0.0 == name })
    var mutator = Mutator(rng: SimRandom(seed: 2_026, stream: "scenario-mutations:" + name))
    var failures = 0
    for round in 0..<rounds {
      let mutated = mutator.mutate(text)
      let source = "mutant-\(round).scenario"
      switch ScenarioParser.parse(mutated, source: source) {
      case .failure(let errors):
        failures += 1
        checkPointsIntoTheFile(errors, mutated, source)
      case .success(let file):
        // Whatever parses writes back to an equal file.
        let again = ScenarioParser.parse(file.rendered(), source: source)
        guard case .success(let reread) = again else {
          Issue.record("a mutant parsed but its rendering did not:\n\(mutated)\n---\n\(file.rendered())")
          continue
        }
        #expect(reread.withoutLocations == file.withoutLocations, "\(mutated)")
      }
    }
    #expect(failures > rounds / 10, "the mutations should break most files")
  }

  /// Extreme lines, named: the texts are made inside the test, not passed as 100 kB arguments.
  enum LongLine: String, CaseIterable, Sendable {
    case letters, seed, about, unterminatedAbout, quotes, spacesThenWord, tabs, deviceName, timeDigits, policyWords,
      expectPath, repeatedDevices, manyDevices, manyAssignments, manyDeployed, hugeDefault, hugeLoss, dots, hugeDrift,
      combiningMarks, emojiFamilies, carriageReturns, verticalTabs, formFeedsInAString, replacementCharacters, bidiControls,
      manyShortLinesAfterALongOne

    var text: String {
      switch self {
      case .letters: String(repeating: "a", count: 100_000)
      case .seed: "seed " + String(repeating: "9", count: 100_000)
      case .about: "about \"" + String(repeating: "x", count: 100_000) + "\""
      case .unterminatedAbout: "about \"" + String(repeating: "x", count: 100_000)
      case .quotes: String(repeating: "\"", count: 100_001)
      case .spacesThenWord: String(repeating: " ", count: 100_000) + "x"
      case .tabs: String(repeating: "\t", count: 100_000)
      case .deviceName: "devices a\nat 1s " + String(repeating: "ipad", count: 25_000) + " sync"
      case .timeDigits: "devices a\nat " + String(repeating: "1", count: 100_000) + "s sync"
      case .policyWords: "devices a\npolicy " + String(repeating: "crdt ", count: 20_000)
      case .expectPath: "devices a\nexpect " + String(repeating: "n1.", count: 30_000) + " == 1"
      case .repeatedDevices: "devices " + String(repeating: "d ", count: 50_000)
      case .manyDevices: "devices " + (0..<50_000).map { "d\($0)" }.joined(separator: " ")
      case .manyAssignments: "devices a\nat 1s a create T x " + (0..<20_000).map { "f\($0)=1" }.joined(separator: " ")
      case .manyDeployed: "devices a\ndeployed " + (0..<20_000).map { "T\($0)" }.joined(separator: " ")
      case .hugeDefault: "devices a\ntype T\n  f: int = " + String(repeating: "8", count: 100_000)
      case .hugeLoss: "devices a\nloss " + String(repeating: "1", count: 100_000) + "%"
      case .dots: "devices a\nlatency " + String(repeating: ".", count: 100_000)
      case .hugeDrift: "devices a\nclock a skew 1s drift " + String(repeating: "4", count: 100_000) + "ppm"
      case .combiningMarks: String(repeating: "\u{301}", count: 100_000)
      case .emojiFamilies: String(repeating: "👩‍👩‍👧", count: 20_000)
      case .carriageReturns: "devices a" + String(repeating: "\r", count: 100_000) + "b\nseed 1"
      case .verticalTabs: "devices" + String(repeating: "\u{0B}a", count: 50_000)
      case .formFeedsInAString: "devices a\nabout \"" + String(repeating: "\u{0C}", count: 100_000) + "\""
      case .replacementCharacters: "devices a\nabout \"" + String(repeating: "\u{FFFD}", count: 100_000)
      case .bidiControls: "devices " + String(repeating: "\u{202E}a\u{2066}", count: 30_000)
      case .manyShortLinesAfterALongOne: "devices a\n#" + String(repeating: "x", count: 100_000) + String(repeating: "\nat 1s b sync", count: 5_000)
      }
    }
  }

  @Test(arguments: LongLine.allCases)
  func hundredThousandCharacterLinesAreHandled(line: LongLine) {
    let text = line.text
    switch ScenarioParser.parse(text, source: "long.scenario") {
    case .failure(let errors): checkPointsIntoTheFile(errors, text, "long.scenario")
    case .success: break
    }
  }

  @Test(arguments: [
    "", "\"", "\n\"", "\u{0}", "devices a\u{0}b", "devices a\nabout \"\u{0}\"", "\u{FEFF}", "\u{FEFF}\u{FEFF}devices a", "\r", "\r\r\n\r",
    "\\", "#", "=", "==", "..", "%", "?", ":", "at", "at at at", "expect", "expect expect", "type", "  ", "\t:", "  :", "  ::",
    "devices a\ntype T\n  :", "devices a\ntype T\n  x:", "devices a\ntype T\n  x: ref", "devices a\ntype T\n  x: ref ?",
    "devices a\ntype T\n  x: int =",
    "devices a\ntype T\n  x:=", "devices a\ntype T\n  x: string=\"", "devices a\nat 1s a set", "devices a\nat 1s a create",
    "devices a\nat 1s a append .",
    "devices a\nat 1s a append x.", "devices a\nat 1s a append .y", "devices a\nexpect .", "devices a\nexpect a. == 1", "devices a\nexpect a.b in",
    "devices a\nexpect x ==", "devices a\nexpect lost-edit ==", "devices a\nclock", "devices a\nclock a", "devices a\nclock a skew",
    "devices a\nclock a skew 1s drift", "devices a\nclock a skew 1s drift ppm", "devices a\nclock a skew 1s drift +ppm",
    "devices a\nclock a skew 1s drift -",
    "devices a\nlatency ..", "devices a\nlatency 1s..", "devices a\nlatency ..1s", "devices a\nloss %", "devices a\nloss .%", "devices a\nloss 1.%",
    "devices a\nloss 0.0000001%", "devices a\nseed", "devices a\nseed +1", "devices a\nat 1s a clock +",
    "devices a\nat 1s a clock -9223372036854775808ns",
    "devices a\nat 9223372036854775807ns sync", "devices a\nat 106751d sync", "devices a\nat 1.9999999999s sync", "devices a\nat 0.0000000001s sync",
    "devices a\nat 1µs sync", "devices a\nat 1μs a sync", "devices a\ntype T\n  d: date = -1s", "devices a\ntype T\n  i: int = -",
    "devices a\ntype T\n  i: int = --1", "devices a\ntype T\n  i: int = -9223372036854775809", "scenario \"\"\ndevices a",
    "devices a\npolicy crdt retention=99999999999999999999d", "devices a\npolicy crdt batch=99999999999999999999999",
    "devices a\npolicy =", "devices a\npolicy \u{301}", "devices a\u{301}", "devices a \u{301}", "devices \u{202E}a",
    // Separators that are not spaces or tabs, and lone carriage returns.
    "devices a\u{0B}b", "devices a\u{0C}", "\u{0B}", "\u{0C}\u{0C}\n", "devices a\rb\nseed 1", "a\rb\rc", "# x\r", "#\r\n\r",
    "about \"\r\"", "devices a\n\"\\\r\"", "devices a\r\r", "\r\n\r\n\r", "devices a\n\r\u{0B}\u{0C}\r\n",
  ])
  func oddSmallInputsAreHandled(text: String) throws {
    switch ScenarioParser.parse(text, source: "odd.scenario") {
    case .failure(let errors): checkPointsIntoTheFile(errors, text, "odd.scenario")
    case .success(let file):
      #expect(try parsed(file.rendered()).withoutLocations == file.withoutLocations)
    }
  }

  @Test func invalidUTF8DecodedLossilyIsHandled() {
    var bytes = Array(Fixtures.twoDeviceAcceptance.utf8)
    for i in stride(from: 3, to: bytes.count, by: 97) { bytes[i] = 0xFF }
    bytes.insert(contentsOf: [0xC3, 0x28, 0xE2, 0x82, 0xF0, 0x90, 0x28], at: 40)
    let text = String(decoding: bytes, as: UTF8.self)
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "bad-utf8.scenario") else {
      Issue.record("expected errors")
      return
    }
    checkPointsIntoTheFile(errors, text, "bad-utf8.scenario")
  }

  @Test func invalidUTF8ReadAsBytesIsReportedAndPointsIntoTheFile() {
    var bytes = Array(Fixtures.twoDeviceAcceptance.utf8)
    for i in stride(from: 3, to: bytes.count, by: 97) { bytes[i] = 0xFF }
    bytes.insert(contentsOf: [0xC3, 0x28, 0xE2, 0x82, 0xF0, 0x90, 0x28], at: 40)
    guard case .failure(let errors) = ScenarioParser.parse(utf8: bytes, source: "bad-utf8.scenario") else {
      Issue.record("expected errors")
      return
    }
    checkPointsIntoTheFile(errors, String(decoding: bytes, as: UTF8.self), "bad-utf8.scenario")
  }

  /// Damaged bytes, read as a file is: never a crash, always a diagnostic in the file.
  @Test(arguments: Fixtures.all.map(\.name))
  func damagedBytesAreHandled(name: String) throws {
    let text = try #require(Fixtures.all.first { $0.name == name }).text
    var rng = SimRandom(seed: 2_026, stream: "byte-damage:" + name)
    let odd: [[UInt8]] = [[0xFF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0x0D], [0x0B], [0x0C], [0x00], [0xEF, 0xBB, 0xBF], [0x22], [0x5C]]
    for round in 0..<(Self.nightly ? 500 : 60) {
      var bytes = Array(text.utf8)
      for _ in 0...Int(rng.below(4)) {
        let at = Int(rng.below(UInt64(bytes.count + 1)))
        bytes.insert(contentsOf: rng.choose(from: odd) ?? [0xFF], at: at)
      }
      let source = "damaged-\(round).scenario"
      switch ScenarioParser.parse(utf8: bytes, source: source) {
      case .failure(let errors): checkPointsIntoTheFile(errors, String(decoding: bytes, as: UTF8.self), source)
      case .success(let file):
        // (Invalid UTF-8 in a comment is allowed.)
        #expect(try parsed(file.rendered()).withoutLocations == file.withoutLocations)
      }
    }
  }

  @Test func aLongLineOfInvalidBytesIsHandled() {
    let bytes =
      Array("devices a\nabout \"".utf8) + [UInt8](repeating: 0xFF, count: 100_000) + Array("\"\n# ".utf8)
      + [UInt8](repeating: 0xC3, count: 100_000)
    guard case .failure(let errors) = ScenarioParser.parse(utf8: bytes, source: "ff.scenario") else {
      Issue.record("expected errors")
      return
    }
    #expect(errors.diagnostics.map(\.message) == ["invalid UTF-8 in a string; scenario files are UTF-8 text"])
    #expect(errors.rendered().utf8.count < 2_000)
    checkPointsIntoTheFile(errors, String(decoding: bytes, as: UTF8.self), "ff.scenario")
  }

  /// Only the first 50 diagnostics are kept while parsing; found out of line order (the
  /// declarations are checked before the timeline), they are still the first 50 by line.
  @Test func theFiftyKeptAreTheFirstByLineWhateverTheOrderFound() {
    let creates = (1...100).map { "at 1s a create Nope n\($0)" }
    let text = (["devices a"] + creates + Array(repeating: "seed 1", count: 300)).joined(separator: "\n")
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "order.scenario") else {
      Issue.record("expected errors")
      return
    }
    #expect(errors.diagnostics.map(\.location.line) == Array(2...51))
    #expect(errors.diagnostics.allSatisfy { $0.message == "unknown type 'Nope'; declare it with a 'type' line" })
    #expect(errors.omitted == 400 - 50, "100 unknown types, 299 repeated seeds, 1 seed after the first 'at'")
  }

  @Test func aHundredThousandBadLinesAreCountedExactly() {
    let text = "devices a\n" + String(repeating: "bogus x\n", count: 100_000)
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "many.scenario") else {
      Issue.record("expected errors")
      return
    }
    #expect(errors.diagnostics.map(\.location.line) == Array(2...51))
    #expect(errors.omitted == 100_000 - 50)
  }

  @Test func tenThousandBadLinesAreCappedAtFiftyDiagnostics() {
    let text = (0..<10_000).map { "line\($0) \"oops" }.joined(separator: "\n")
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "many.scenario") else {
      Issue.record("expected errors")
      return
    }
    #expect(errors.diagnostics.count == 50)
    #expect(errors.omitted == 10_001 - 50, "10,000 unterminated strings and no devices")
    checkPointsIntoTheFile(errors, text, "many.scenario")
  }
}

// MARK: - Checking

/// Every diagnostic is on a line of the file, quotes that line, and renders as `SOURCE:LINE:COL`.
func checkPointsIntoTheFile(_ errors: ScenarioErrors, _ text: String, _ source: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
  let lines = linesAsWritten(text)
  #expect(!errors.diagnostics.isEmpty, "a failure has at least one diagnostic", sourceLocation: sourceLocation)
  #expect(errors.diagnostics.count <= ScenarioErrors.limit, sourceLocation: sourceLocation)
  for d in errors.diagnostics {
    let line = d.location.line
    guard line >= 1, line <= lines.count else {
      Issue.record("diagnostic on line \(line) of a \(lines.count)-line file: \(d.message)", sourceLocation: sourceLocation)
      continue
    }
    #expect(d.lineText == lines[line - 1], sourceLocation: sourceLocation)
    #expect(d.location.column >= 1, sourceLocation: sourceLocation)
    #expect(d.rendered().hasPrefix("\(source):\(line):\(d.location.column): error: "), sourceLocation: sourceLocation)
  }
  let sorted = errors.diagnostics.map { ($0.location.line, $0.location.column) }
  #expect(zip(sorted, sorted.dropFirst()).allSatisfy { $0 <= $1 }, "sorted by line then column", sourceLocation: sourceLocation)
  #expect(errors.rendered().hasPrefix("\(source):"), sourceLocation: sourceLocation)
}

/// The file's lines as the parser numbers them (byte-order mark and `\r\n` endings dropped).
func linesAsWritten(_ text: String) -> [String] {
  var scalars = Array(text.unicodeScalars)
  if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
  var lines = scalars.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
    var l = Array(line)
    if l.last == "\r" { l.removeLast() }
    return String(String.UnicodeScalarView(l))
  }
  if lines.count > 1, lines.last == "" { lines.removeLast() }
  return lines
}

// MARK: - Mutations

/// Seeded, deterministic damage to a scenario text.
struct Mutator {
  var rng: SimRandom

  static let hugeNumbers = [
    "99999999999999999999999999", "18446744073709551616", "-9223372036854775809", "9223372036854775807", "3651d", "106752d",
    "9999999999999999999s", "1e308", "0.0000000001s", "1000001ppm", "101%", "-0", "4294967296",
  ]
  static let oddUnicode = [
    "\u{0}", "\u{301}", "é", "👩‍👩‍👧", "\u{FEFF}", "\u{202E}", "\r", "\t", "\"", "\\", "#", "\u{2028}", "\u{FFFD}", "ﷺ", "𝕏", "\u{200D}",
    "\r\n", "\n", " ", "=", ".", "?", ":", "..", "%",
  ]

  mutating func mutate(_ text: String) -> String {
    var t = text
    for _ in 0...Int(rng.below(3)) { t = once(t) }
    return t
  }

  mutating func pick<T>(_ items: [T]) -> T? { rng.choose(from: items) }

  mutating func position(in scalars: [Unicode.Scalar]) -> Int { Int(rng.below(UInt64(scalars.count + 1))) }

  mutating func insert(_ s: String, into text: String) -> String {
    var scalars = Array(text.unicodeScalars)
    scalars.insert(contentsOf: s.unicodeScalars, at: position(in: scalars))
    return String(String.UnicodeScalarView(scalars))
  }

  /// Replaces one random word (a run of non-space scalars) with `s`.
  mutating func replaceWord(in text: String, with s: String) -> String {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let li = pick(Array(lines.indices)) else { return text }
    var words = lines[li].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
    guard let wi = pick(Array(words.indices)) else { return text }
    words[wi] = s
    lines[li] = words.joined(separator: " ")
    return lines.joined(separator: "\n")
  }

  mutating func once(_ text: String) -> String {
    switch rng.below(9) {
    case 0:  // flip one bit of one byte, decode lossily
      var bytes = Array(text.utf8)
      guard !bytes.isEmpty else { return text }
      let i = Int(rng.below(UInt64(bytes.count)))
      bytes[i] ^= UInt8(1) << UInt8(rng.below(8))
      return String(decoding: bytes, as: UTF8.self)
    case 1:  // truncate
      let scalars = Array(text.unicodeScalars)
      return String(String.UnicodeScalarView(scalars[..<position(in: scalars)]))
    case 2:  // shuffle the lines
      var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
      rng.shuffle(&lines)
      return lines.joined(separator: "\n")
    case 3:  // duplicate a line
      var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
      guard let line = pick(lines) else { return text }
      lines.insert(line, at: Int(rng.below(UInt64(lines.count + 1))))
      return lines.joined(separator: "\n")
    case 4:  // a huge number, inserted or in place of a word
      let n = pick(Self.hugeNumbers) ?? "9"
      return rng.below(2) == 0 ? insert(n, into: text) : replaceWord(in: text, with: n)
    case 5:  // odd Unicode
      return insert(pick(Self.oddUnicode) ?? "\u{0}", into: text)
    case 6:  // delete a run of scalars
      var scalars = Array(text.unicodeScalars)
      guard !scalars.isEmpty else { return text }
      let start = Int(rng.below(UInt64(scalars.count)))
      let length = 1 + Int(rng.below(20))
      scalars.removeSubrange(start..<min(scalars.count, start + length))
      return String(String.UnicodeScalarView(scalars))
    case 7:  // a word of the file in place of another: plausible but wrong
      let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
      guard let w = pick(words) else { return text }
      return replaceWord(in: text, with: w)
    default:  // drop a whole line
      var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
      guard !lines.isEmpty else { return text }
      lines.remove(at: Int(rng.below(UInt64(lines.count))))
      return lines.joined(separator: "\n")
    }
  }
}
