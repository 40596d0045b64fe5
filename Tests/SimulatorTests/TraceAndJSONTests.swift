import Foundation
import Testing

@_spi(Kernel) @testable import Simulator

@Suite struct TraceAndJSONTests {
  static let kind = TraceKind(code: 9, name: "send", fields: ("msg", "to", "-"))

  @Test func fnv1aMatchesTheReferenceValues() {
    var h = StableHasher()
    #expect(h.value == 0xcbf2_9ce4_8422_2325)
    h.combine(byte: UInt8(ascii: "a"))
    #expect(h.value == 0xaf63_dc4c_8601_ec8c)
    #expect(h.hexDigest == "af63dc4c8601ec8c")
  }

  @Test func stringBoundariesChangeTheHash() {
    var a = StableHasher()
    a.combine("ab")
    a.combine("c")
    var b = StableHasher()
    b.combine("a")
    b.combine("bc")
    #expect(a.value != b.value)
  }

  /// The trace hash's string words, read from the string's UTF-8 in place, are the words the
  /// definition gives byte by byte (little-endian, the last zero-padded, then the length with
  /// the top bit set): every length around the word boundaries, non-ASCII, and a string built
  /// from a substring and from an NSString (not native) alike.
  @Test func traceHasherStringWordsMatchTheByteByByteDefinition() {
    func byByte(_ s: String) -> UInt64 {
      var h = TraceHasher()
      var word: UInt64 = 0
      var shift: UInt64 = 0
      var count: UInt64 = 0
      for byte in s.utf8 {
        word |= UInt64(byte) << shift
        shift += 8
        count += 1
        if shift == 64 {
          h.combine(word)
          word = 0
          shift = 0
        }
      }
      if shift > 0 { h.combine(word) }
      h.combine(count | 0x8000_0000_0000_0000)
      return h.value
    }
    var samples = (0...40).map { String(repeating: "x", count: $0) }
    samples += ["é", "naïve café", "日本語のテキスト", "🙂🙃", "a\u{0}b", String(repeating: "ü", count: 17)]
    samples.append(String("--substring of a longer string--".dropFirst(2).dropLast(2)))
    samples.append(NSString(string: "bridged: ünïcödé, eight+").description)
    for s in samples {
      var h = TraceHasher()
      h.combine(s)
      #expect(h.value == byByte(s), "\(s.debugDescription)")
    }
  }

  @Test func hashOnlyAndFullRecordingAgree() {
    var quick = TraceRecorder(mode: .hashOnly)
    var full = TraceRecorder(mode: .full)
    for i in 0..<100 {
      let r = TraceRecord(
        time: VirtualTime(nanoseconds: Int64(i)), kind: Self.kind, node: Int32(i % 3), a: Int64(i), b: 2, detail: i % 10 == 0 ? "n\(i)" : nil)
      quick.record(r)
      full.record(r)
    }
    #expect(quick.hash == full.hash)
    #expect(quick.records.isEmpty)
    #expect(full.records.count == 100)
  }

  @Test func everyFieldOfARecordIsHashed() {
    func hash(_ r: TraceRecord) -> String {
      var t = TraceRecorder()
      t.record(r)
      return t.hash
    }
    let base = TraceRecord(time: VirtualTime(nanoseconds: 5), kind: Self.kind, node: 1, a: 1, b: 2, c: 3, detail: "x")
    var variants = [base]
    variants.append(
      {
        var r = base
        r.time = VirtualTime(nanoseconds: 6)
        return r
      }())
    variants.append(
      {
        var r = base
        r.node = 2
        return r
      }())
    variants.append(
      {
        var r = base
        r.a = 9
        return r
      }())
    variants.append(
      {
        var r = base
        r.b = 9
        return r
      }())
    variants.append(
      {
        var r = base
        r.c = 9
        return r
      }())
    variants.append(
      {
        var r = base
        r.detail = "y"
        return r
      }())
    variants.append(
      {
        var r = base
        r.detail = nil
        return r
      }())
    variants.append(
      {
        var r = base
        r.kind = TraceKind(code: 10, name: "other")
        return r
      }())
    #expect(Set(variants.map(hash)).count == variants.count)
  }

  @Test func jsonLinesHaveSortedKeysAndNamedFields() {
    var t = TraceRecorder(mode: .full)
    t.record(Self.kind, at: VirtualTime(nanoseconds: 1_500_000_000), node: 0, 7, 1, detail: "n1")
    #expect(
      t.jsonLines(nodeNames: ["phone", "server"]) == #"{"detail":"n1","kind":"send","msg":7,"node":"phone","t":1500000000,"time":"1.500s","to":1}"#
        + "\n")
  }

  @Test func jsonValuesSerializeDeterministically() {
    let v: JSONValue = ["z": 1, "a": ["s": "quote\" back\\ nl\n ctl\u{1}"], "m": [true, nil, .double(1.5), .double(.nan)]]
    #expect(v.serialized() == #"{"a":{"s":"quote\" back\\ nl\n ctl\u0001"},"m":[true,null,1.5,null],"z":1}"#)
    #expect(v.serialized(pretty: true).hasPrefix("{\n  \"a\": {\n    \"s\""))
    // Foundation agrees that it is valid JSON.
    #expect((try? JSONSerialization.jsonObject(with: Data(v.serialized().utf8))) != nil)
  }

  @Test func atomicWritesReplaceWholeFilesAndFailCleanly() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("out.txt").path
    try AtomicFile.write("first", to: path)
    try AtomicFile.write("second", to: path)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "second")
    #expect(throws: AtomicFile.WriteError.self) { try AtomicFile.write("x", to: folder.path + "/missing/out.txt") }
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.txt"])
  }

  /// `/dev/stdout` and friends are the process's own descriptors: written in place, in order,
  /// never replaced by a rename (which, with stdout redirected to a file, lost the report).
  @Test func theProcesssOwnStreamsAreWrittenThroughTheirDescriptor() throws {
    #expect(AtomicFile.ownDescriptor("/dev/stdout") == 1)
    #expect(AtomicFile.ownDescriptor("/dev/stderr") == 2)
    #expect(AtomicFile.ownDescriptor("/dev/fd/1") == 1)
    #expect(AtomicFile.ownDescriptor("/dev/fd/987654") == nil)  // not open: an ordinary path
    #expect(AtomicFile.ownDescriptor("/tmp/stdout") == nil)
    #expect(AtomicFile.problem(writing: "/dev/stdout") == nil)
    // A descriptor of our own, pointing at a file: the write lands after what is there.
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("own-\(getpid()).txt").path
    defer { unlink(path) }
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    try #require(fd >= 0)
    defer { close(fd) }
    #expect(AtomicFile.writeAll("report\n", to: fd) == nil)
    try AtomicFile.write("trace\n", to: "/dev/fd/\(fd)")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "report\ntrace\n")
  }
}
