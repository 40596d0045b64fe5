import Foundation
import ReferenceOracle
import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// Assets (issue 33): the `asset` kind and the sized `bytes` literal, what a mistake in them
/// says, CloudKit's per-record limits, the devices' files and the staging area, bandwidth, and
/// `missing-asset` in both oracles.
@Suite struct AssetKindTests {
  static let header = """
    devices iPad phone
    policy field-lww-hlc
    latency 100ms
    type Photo
      caption: string = "" mutable
      image: asset? mutable
      body: bytes = 0x mutable

    """

  @Test func literalsAreReadAndWrittenBack() throws {
    let file = try parsed(
      Self.header + """
        at 0s iPad create Photo p1 image=asset("IMG_0042.heic", 3MB) body=bytes("body-v1",1.2MB)
        at 1s iPad set p1 image=asset("IMG 2.heic",2500KB)
        settle
        """)
    guard case .create(_, _, _, let a) = file.timeline[0].action, case .set(_, _, let b) = file.timeline[1].action else {
      Issue.record("\(file.timeline)")
      return
    }
    #expect(
      a.map(\.value) == [.content(name: "IMG_0042.heic", size: 3_000_000, isAsset: true), .content(name: "body-v1", size: 1_200_000, isAsset: false)])
    #expect(b.map(\.value) == [.content(name: "IMG 2.heic", size: 2_500_000, isAsset: true)])
    let text = file.rendered()
    #expect(text.contains(#"image=asset("IMG_0042.heic", 3MB)"#) && text.contains(#"body=bytes("body-v1", 1200KB)"#), "\(text)")
    #expect(try parsed(text).rendered() == text)
  }

  @Test(arguments: [
    (
      #"at 0s iPad create Photo p1 image=asset(IMG, 3MB)"#,
      #"expected the content's name in quotes right after 'asset('; write asset("IMG_0042.heic", 3MB)"#
    ),
    (#"at 0s iPad create Photo p1 image=asset("IMG")"#, #"expected ',' and a size after the name; write asset("IMG_0042.heic", 3MB)"#),
    (#"at 0s iPad create Photo p1 image=asset("IMG", 3MB"#, #"expected ')' after the size; write asset("IMG_0042.heic", 3MB)"#),
    (#"at 0s iPad create Photo p1 image=asset("IMG", 3 MB)"#, "expected ')' after the size; write asset(\"IMG_0042.heic\", 3MB)"),
    (#"at 0s iPad create Photo p1 image=asset("IMG", 3TBX)"#, "expected a size such as 500B, 250KB, 2MB or 1.5GB, found '3TBX'"),
    (
      #"at 0s iPad create Photo p1 image=asset("", 3MB)"#,
      #"the content's name cannot be empty: it is the content's identity; write asset("IMG_0042.heic", 3MB)"#
    ),
    (#"at 0s iPad create Photo p1 image="IMG""#, #"image is an asset; write asset("NAME", SIZE), such as asset("IMG_0042.heic", 3MB)"#),
    (
      #"at 0s iPad create Photo p1 body=asset("b", 1MB)"#,
      #"body is bytes; write 0x and two hex digits a byte, such as 0x89504e47 (0x for none), or content by size such as bytes("body-v3", 1.2MB)"#
    ),
    (#"at 0s iPad create Photo p1 caption=bytes("b", 1MB)"#, #"caption is a string; write "…""#),
    ("at 0s iPad create Photo p1\nat 1s iPad delete-file p1.caption", "delete-file works on asset fields; caption is a string"),
    ("at 0s iPad create Photo p1\nat 1s iPad change-file p1", "expected ID.field, as in 'iPad change-file p1.photo'; found 'p1'"),
    ("at 1s iPad purge-staging now", "unexpected 'now'; write 'DEVICE purge-staging'"),
  ])
  func mistakesSayWhatIsWrong(line: String, message: String) {
    let found = messages(Self.header + line + "\n")
    #expect(found == [message], "\(found)")
  }

  @Test(arguments: [
    ("  a: asset = asset(\"x\", 1MB)", "an asset field cannot have a default (a file is written by a device); remove '= asset(…'"),
    ("  a: asset? encrypted", "assets are encrypted by default (CKAsset); remove 'encrypted'"),
    ("  a: ref P? encrypted", "a reference cannot be encrypted (CloudKit keeps CKRecord.Reference values in the clear); remove 'encrypted'"),
    ("  a: CKAsset", "unknown kind 'CKAsset'; did you mean 'asset'?"),
    ("  a: assett?", "unknown kind 'assett'; did you mean 'asset'?"),
  ])
  func schemaMistakesSayWhatIsWrong(line: String, message: String) {
    let found = messages("devices iPad\ntype P\n\(line)\n")
    #expect(found == [message], "\(found)")
  }

  @Test(arguments: [
    ("bandwidth 0bps", "a bandwidth must be more than zero; found '0bps'"),
    ("bandwidth 2Tbps", "expected a rate such as 500kbps, 2Mbps or 1Gbps, found '2Tbps'"),
    ("bandwidth 5Gbps", "'5Gbps' is faster than the 1Gbps a scenario may set (leave the line out for unlimited)"),
    ("bandwidth 2Mbps\nbandwidth 3Mbps", "the world's bandwidth is already set on line 1"),
    ("bandwidth ipad 2Mbps", "unknown device 'ipad'; did you mean 'iPad'?"),
  ])
  func bandwidthMistakesSayWhatIsWrong(line: String, message: String) {
    let found = messages(line + "\n" + Self.header)
    #expect(found == [message], "\(found)")
  }

  @Test func bandwidthIsWrittenBackAndSlowsOnlyTheLinkItIsOn() throws {
    let text = "bandwidth 1.5Mbps\nbandwidth phone 500kbps\n" + Self.header + "at 0s iPad create Photo p1 image=asset(\"a\", 3MB)\nsettle\n"
    let file = try parsed(text)
    #expect(file.bandwidth == [BandwidthSetting(device: nil, bitsPerSecond: 1_500_000), BandwidthSetting(device: "phone", bitsPerSecond: 500_000)])
    #expect(try parsed(file.rendered()).bandwidth == file.bandwidth)
    // 3 MB up at 1.5 Mbps is 16 s, and down to the phone at 500 kbps 48 s more: the run is
    // quiet only after both.
    let slow = ScenarioRunner.run(file, keepEvents: true)
    let fast = ScenarioRunner.run(try parsed(Self.header + "at 0s iPad create Photo p1 image=asset(\"a\", 3MB)\nsettle\n"), keepEvents: true)
    #expect(slow.report.passed && fast.report.passed, "\(slow.report.text)")
    // When the phone first receives p1 (the fetch reply that carries it).
    func firstCopy(_ r: ScenarioRunner.Result) -> VirtualTime? {
      var sentWithP1: Set<Int> = []
      for e in r.world.events {
        if case .sent(let seq, .server, .device(1), .fetchReply(_, .changes(let records, _, _))) = e.what, !records.isEmpty { sentWithP1.insert(seq) }
        if case .arrived(let seq, .device(1), .delivered, _) = e.what, sentWithP1.contains(seq) { return e.time }
      }
      return nil
    }
    let slowAt = try #require(firstCopy(slow))
    let fastAt = try #require(firstCopy(fast))
    #expect(slowAt > VirtualTime.zero + .seconds(64) && fastAt < VirtualTime.zero + .seconds(3), "\(slowAt) \(fastAt)")
  }

  @Test func aRecordOverOneMegabyteFailsAloneAndStrandsNamingItsSize() throws {
    let result = ScenarioRunner.run(
      try parsed(
        Self.header + """
          at 0s iPad create Photo p1 caption="small"
          at 0s iPad create Photo p2 body=bytes("big", 1.3MB)
          at 0s iPad create Photo p3 image=asset("video", 60MB)
          settle
          """))
    let stranded = result.report.anomalies.filter { $0.kind == .strandedRecord }
    #expect(stranded.map { $0.record?.name } == ["p2", "p3"], "\(result.report.text)")
    #expect(
      stranded[0].explanation.contains("p2 is 1.3 MB without its assets, and CloudKit saves at most 1 MB a record"), "\(stranded[0].explanation)")
    #expect(stranded[1].explanation.contains("an asset of p3 is 60 MB, and CloudKit takes at most 50 MB an asset"), "\(stranded[1].explanation)")
    // The small record in the same request is saved: the limit is per record.
    #expect(result.world.serverRecord(0) != nil)
    // An asset counts for nothing against the 1 MB: 40 MB of photo and a small body are saved.
    let ok = ScenarioRunner.run(try parsed(Self.header + "at 0s iPad create Photo p1 image=asset(\"v\", 40MB) body=bytes(\"b\", 900KB)\nsettle\n"))
    #expect(ok.report.violations.isEmpty, "\(ok.report.text)")
  }

  @Test func theStagingAreaAndTheFilesAreJudgedByBothOracles() throws {
    let text =
      Self.header + """
        at 0s iPad create Photo p1 image=asset("a", 3MB)
        at 0s iPad create Photo p2 image=asset("b", 3MB)
        at 20s phone purge-staging
        at 25s iPad delete-file p2.image
        settle
        """
    for (policy, phone) in [("field-lww-hlc", 0), ("keeps-staging-url", 2)] {
      let result = ScenarioRunner.run(try parsed(text), policy: try PolicySpec.parse(policy).get(), recordObservations: true)
      let missing = result.report.anomalies.filter { $0.kind == .missingAsset }
      // iPad deleted its own file of p2 (the app's bug under any engine); the phone's staging
      // purge takes what it did not copy.
      #expect(missing.filter { $0.devices.map(\.name) == ["phone"] }.count == phone, "\(policy): \(result.report.text)")
      #expect(
        missing.contains { $0.devices.map(\.name) == ["iPad"] && $0.record?.name == "p2" && $0.explanation.contains("the app deleted its file") })
      let verdicts = result.report.anomalies.map { ReferenceVerdict(kind: $0.kind.rawValue, record: $0.record?.key, field: $0.field?.index) }.sorted()
      #expect(ReferenceOracle.judge(result.world) == verdicts, "\(policy)")
    }
  }

  @Test func theWorkloadDrawsAssetsOnlyForASchemaWithAssetFields() throws {
    let policy = try PolicySpec.parse("field-lww-hlc").get()
    var assets = WorkloadShape()
    assets.schema = WorkloadShape.albumSchema
    #expect(assets.name == "assets")
    var drew = (values: 0, purges: 0, changes: 0, links: 0)
    for seed in UInt64(1)...20 {
      let (file, _) = WorkloadGenerator.generate(seed: seed, shape: assets, policy: policy)
      drew.links += file.bandwidth.count
      for e in file.timeline {
        switch e.action {
        case .create(_, _, _, let f), .set(_, _, let f):
          drew.values += f.filter { if case .content(_, _, true) = $0.value { true } else { false } }.count
        case .purgeStaging: drew.purges += 1
        case .file(_, _, _, true): drew.changes += 1
        case .file: Issue.record("the swarm draws no delete-file")
        default: break
        }
      }
    }
    #expect(drew.values > 0 && drew.purges > 0 && drew.changes > 0 && drew.links > 0, "\(drew)")
    // The default workload has none of it.
    for seed in UInt64(1)...20 {
      let (file, _) = WorkloadGenerator.generate(seed: seed, shape: WorkloadShape(), policy: policy)
      #expect(file.bandwidth.isEmpty)
      #expect(!file.timeline.contains { if case .purgeStaging = $0.action { true } else { false } })
    }
  }
}
