import Foundation
import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// The `double` and `bytes` kinds: their literals, what a mistake in them says, how they are
/// written back, run, judged and fuzzed.
@Suite struct DoubleAndBytesKindTests {
  static let text = """
    devices iPad phone
    policy field-lww-hlc
    latency 100ms
    type Photo
      title: string = "" mutable
      price: double = 9.99 mutable
      rating: double? = -0.25
      far: double = 1e300
      thumb: bytes = 0x mutable
      blob: bytes? = 0x89504E47
    at 0s    iPad  create Photo p1 title="Sunset" price=12 thumb=0x0102
    at 2s    sync
    at 5s    offline phone
    at 6s    phone set p1 price=3.5 thumb=0xcafe
    at 7s    iPad  set p1 price=1.5e-3 thumb=0xbeef
    at 20s   online phone
    settle
    expect p1.price in 3.5 0.0015
    expect p1.thumb in 0xcafe 0xbeef
    expect p1.rating == -0.25
    expect p1.far == 1e300
    expect p1.blob == 0x89504e47
    """

  @Test func literalsAreReadAsTheirKinds() throws {
    let file = try parsed(Self.text)
    let fields = file.schema.types[0].fields
    #expect(fields.map(\.kind) == [.string, .double, .double, .double, .bytes, .bytes])
    #expect(
      fields.map(\.defaultValue) == [.string(""), .double(9.99), .double(-0.25), .double(1e300), .bytes([]), .bytes([0x89, 0x50, 0x4e, 0x47])])
    guard case .create(_, _, _, let assignments) = file.timeline[0].action else {
      Issue.record("not a create: \(file.timeline[0].action)")
      return
    }
    // A whole number is a double's literal too; as written, it stays an int literal.
    #expect(assignments.map(\.value) == [.string("Sunset"), .int(12), .bytes([1, 2])])
  }

  @Test func aRunJudgesTheValuesAndExpectationsHold() throws {
    let file = try parsed(Self.text)
    let result = ScenarioRunner.run(file)
    #expect(result.report.passed, "\(result.report.text)")
    // The conflict is told in the values' own spelling.
    #expect(result.report.text.contains("set p1.price=3.5") && result.report.text.contains("set p1.thumb=0xbeef"), "\(result.report.text)")
    // A whole number expected of a double field is that double.
    let twelve = try parsed(
      """
      devices iPad
      type P
        x: double = 0.0
      at 0s iPad create P p x=12
      settle
      expect p.x == 12
      expect p.x == 12.0
      expect p.x in 11 12
      """)
    #expect(ScenarioRunner.run(twelve).report.passed)
  }

  /// The trace hash sees the values: another double or other bytes hash differently, and the
  /// same file hashes the same.
  @Test func theTraceHashSeesTheValues() throws {
    func hash(_ price: String, _ thumb: String) throws -> String {
      let text = Self.text.replacingOccurrences(of: "price=12 thumb=0x0102", with: "price=\(price) thumb=\(thumb)")
      return ScenarioRunner.run(try parsed(text)).report.traceHash
    }
    let base = try hash("12", "0x0102")
    #expect(try hash("12", "0x0102") == base)
    #expect(try hash("12.5", "0x0102") != base)
    #expect(try hash("12", "0x0103") != base)
    #expect(try hash("12", "0x010200") != base)
  }

  @Test func theWriterWritesThemBackAndTheResultParsesToTheSameFile() throws {
    let file = try parsed(Self.text)
    let rendered = file.rendered()
    #expect(rendered.contains("  price: double = 9.99 mutable\n"), "\(rendered)")
    #expect(rendered.contains("  far: double = 1e+300\n"), "\(rendered)")
    #expect(rendered.contains("  blob: bytes? = 0x89504e47\n"), "\(rendered)")
    #expect(rendered.contains("  thumb: bytes = 0x mutable\n"), "\(rendered)")
    let again = try parsed(rendered)
    #expect(again.schema == file.schema)
    #expect(again.rendered() == rendered)
    #expect(again.expectations.map(\.kind) == file.expectations.map(\.kind))
  }

  @Test(arguments: [
    ("  a: float = 1", "unknown kind 'float'; did you mean 'double'?"),
    ("  a: Data", "unknown kind 'Data'; did you mean 'bytes'?"),
    ("  a: Decimal?", "unknown kind 'Decimal'; did you mean 'double'?"),
    ("  a: doubel", "unknown kind 'doubel'; did you mean 'double'?"),
    ("  a: bytes = 0xabc", "bytes take two hex digits each, and 0xabc has an odd number (3): write a leading 0, as in 0x0f for 0xf"),
    ("  a: bytes = 0x1g", "'g' is not a hex digit; bytes are written 0x and two hex digits a byte, as in 0x1f"),
    ("  a: bytes = 0XAB", "write bytes with a lowercase '0x', as in 0x1f"),
    (
      "  a: bytes = 3.5",
      "a is bytes; write 0x and two hex digits a byte, such as 0x89504e47 (0x for none), or content by size such as bytes(\"body-v3\", 1.2MB)"
    ),
    ("  a: string = 0x00", "a is a string; write \"…\""),
    ("  a: int = 2.5", "a is an int; write a whole number such as 42"),
    ("  a: double = \"1\"", "a is a double; write a number such as 3.5, -0.25, 1e3 or 42"),
    (
      "  a: double = 1e999",
      "number 1e999 is too large for a double: write one whose magnitude is at most 1.7976931348623157e+308 (64 characters at most)"
    ),
    (
      "  a: double = 9007199254740993",
      "9007199254740993 has no exact double (a double holds whole numbers exactly up to 9007199254740992); write it as a double, such as 9007199254740992.0"
    ),
  ])
  func mistakesSayWhatIsWrong(line: String, message: String) {
    let found = messages("devices iPad\ntype P\n\(line)\n")
    #expect(found == [message], "\(found)")
  }

  @Test func aMistakeInATimelineValueIsPlaced() throws {
    let text = "devices iPad\ntype P\n  x: double = 0.0\n  b: bytes = 0x\nat 0s iPad create P p x=0x01 b=0x0\n"
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "t.scenario") else {
      Issue.record("parsed")
      return
    }
    #expect(
      errors.diagnostics.map { "\($0.location.line):\($0.location.column) \($0.message)" } == [
        "5:25 x is a double; write a number such as 3.5, -0.25, 1e3 or 42",
        "5:32 bytes take two hex digits each, and 0x0 has an odd number (1): write a leading 0, as in 0x0f for 0xf",
      ])
  }

  @Test func theVocabularyCutsLongBytes() throws {
    let result = ScenarioRunner.run(try parsed(Self.text))
    let vocabulary = Vocabulary(world: result.world, recordNames: result.recordNames)
    #expect(vocabulary.render(.bytes([1, 2, 255])) == "0x0102ff")
    #expect(vocabulary.render(.bytes(Array(repeating: 7, count: 20))) == "0x07070707070707070707070707070707… (20 bytes)")
    #expect(vocabulary.render(.double(-0.25)) == "-0.25")
    #expect(vocabulary.render(.double(42)) == "42.0")
  }

  /// The fuzzer draws values for the new kinds from the seed: the same seed draws the same
  /// workload, every write its own value.
  @Test func theFuzzerDrawsDoublesAndBytes() throws {
    var base = try parsed(Self.text)
    base.timeline = []
    base.expectations = []
    let policy = try PolicySpec.parse("field-lww-hlc").get()
    let shape = WorkloadShape(base: base, intents: 60)
    let (one, _) = WorkloadGenerator.generate(seed: 7, shape: shape, policy: policy)
    let (two, _) = WorkloadGenerator.generate(seed: 7, shape: shape, policy: policy)
    #expect(one == two)
    var doubles: [Double] = []
    var bytes: [[UInt8]] = []
    for entry in one.timeline {
      let fields: [Assignment]
      switch entry.action {
      case .create(_, _, _, let f), .set(_, _, let f): fields = f
      default: continue
      }
      for a in fields {
        if case .double(let d) = a.value { doubles.append(d) }
        if case .bytes(let b) = a.value { bytes.append(b) }
      }
    }
    #expect(doubles.count > 5 && bytes.count > 5, "\(one.rendered())")
    #expect(Set(doubles).count == doubles.count && Set(bytes).count == bytes.count)
    #expect(doubles.contains { $0 < 0 } && doubles.contains { $0 != $0.rounded() })
    let result = Fuzzer.run(seed: 7, shape: shape, policy: policy)
    #expect(result.record.traceHash == Fuzzer.run(seed: 7, shape: shape, policy: policy).record.traceHash)
  }
}
