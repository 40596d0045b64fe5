import Foundation
import ReferenceOracle
import Replica
import Scenarios
import SimTesting
import Testing

@testable import SimSyncEngine

/// Assets and encrypted fields under a user's app (issue 33): `SyncAsset` as `CKAsset`, the
/// device's files (``SimFiles``) with their staging area, `assetFileNotFound` and
/// `assetFileModified`, `encryptedValues`; the correct photos app passes, each planted one is
/// caught, and both oracles agree on every run.
@Suite struct AppAssetTests {
  static func parse(_ text: String) throws -> ScenarioFile { try ScenarioParser.parse(text, source: "assets.scenario").get() }

  static let schema = """
    type Photo
      caption: string = "" mutable
      image: asset? mutable
    """

  /// The mac saves a photo; the phone fetches it, then (killed and launched again) has its
  /// staging area purged; the mac's caption brings the record — and the photo's file, into
  /// staging again — before a second purge.
  static let stagingPurged = """
    devices mac phone
    latency 100ms
    \(schema)
    at 0s    mac   create Photo p1 caption="Beach" image=asset("IMG_0042.heic", 3MB)
    at 10s   phone kill
    at 20s   phone purge-staging
    at 25s   mac   set p1 caption="Beach, 2019"
    at 40s   phone purge-staging
    settle
    """

  /// Offline, the iPad replaces the photo and the phone edits its caption: the phone's save is
  /// refused with `serverRecordChanged`, whose server record has the new photo without its file.
  static let conflict = """
    devices iPad phone
    latency 100ms
    \(schema)
    at 0s    iPad  create Photo p1 caption="Beach" image=asset("IMG_0042.heic", 3MB)
    at 10s   offline iPad phone
    at 11s   iPad  set p1 image=asset("IMG_0042-edited.heic", 3MB)
    at 12s   phone set p1 caption="Beach, 2019"
    at 20s   online iPad
    at 30s   online phone
    at 60s   phone purge-staging
    settle
    """

  /// Runs `text` with `app` on every device, recording the raw observations, and checks that the
  /// reference oracle finds what the oracle found.
  static func run<App: SimApp>(_ text: String, _ app: App.Type, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws
    -> ScenarioRunner.Result
  {
    let file = try parse(text)
    let result = ScenarioRunner._run(
      ScenarioRunner.prepare(file), seed: nil, spec: AppUnderTest.judgedAs, custom: nil, recordObservations: true, app: AppUnderTest(app))
    let verdicts = result.report.anomalies.map { ReferenceVerdict(kind: $0.kind.rawValue, record: $0.record?.key, field: $0.field?.index) }.sorted()
    #expect(ReferenceOracle.judge(result.world) == verdicts, "the oracles disagree: \(result.report.text)", sourceLocation: sourceLocation)
    return result
  }

  // MARK: Staging

  @Test func theAppThatCopiesFetchedPhotosOutOfStagingKeepsThem() throws {
    let report = try Self.run(Self.stagingPurged, PhotosApp.self).report
    #expect(report.passed, "\(report.text)")
    #expect(report.converged)
  }

  @Test func theAppThatKeepsTheStagingURLLosesThePhotoWhenTheSystemPurgesIt() throws {
    let result = try Self.run(Self.stagingPurged, PhotosAppKeepingStagingURLs.self)
    let missing = result.report.anomalies.filter { $0.kind == .missingAsset }
    #expect(missing.count == 1, "\(result.report.text)")
    #expect(missing.first?.devices.map(\.name) == ["phone"])
    #expect(
      missing.first?.explanation.contains("its file was in the staging area, which the system purged at 40.000s") == true, "\(result.report.text)")
    #expect(missing.first?.explanation.contains("the app's code kept the staging file instead of copying it") == true)
  }

  /// The named lesson, run on the apps (its own expectation is the planted preset's): the photo
  /// is missing on the phone only with the app that keeps the staging URL.
  @Test func theStagingLessonCatchesOnlyThePlantedApp() throws {
    let file = try Scenario.load("staging-purged")
    #expect(ScenarioRunner.run(file, app: PhotosApp.self).report.count(.missingAsset) == 0)
    #expect(ScenarioRunner.run(file, app: PhotosAppKeepingStagingURLs.self).report.count(.missingAsset) == 1)
  }

  /// The reference app (any types) copies fetched assets out of staging, and leaves an asset
  /// without a file out of what it saves after a conflict.
  @Test func theReferenceAppKeepsItsAssets() throws {
    for text in [Self.stagingPurged, Self.conflict] {
      let report = try Self.run(text, NotesApp.self).report
      #expect(report.passed, "\(report.text)")
    }
  }

  // MARK: serverRecordChanged

  @Test func theAppThatNeverTakesAnAssetFromTheConflictsServerRecordKeepsThePhoto() throws {
    let result = try Self.run(Self.conflict, PhotosApp.self)
    #expect(result.report.passed, "\(result.report.text)")
    // The phone's save met the conflict, and its app ends with the iPad's photo, copied.
    #expect(result.report.stats.intents > 0)
    #expect(result.report.converged)
  }

  @Test func theAppThatSavesTheServerRecordsAssetReplacesThePhotoWithNothing() throws {
    let result = try Self.run(Self.conflict, PhotosAppMergingServerAssets.self)
    let missing = result.report.anomalies.filter { $0.kind == .missingAsset }
    #expect(missing.count == 2, "\(result.report.text)")
    #expect(Set(missing.flatMap { $0.devices.map(\.name) }) == ["iPad", "phone"])
    #expect(missing.allSatisfy { $0.explanation.contains("the asset was saved without its data") }, "\(result.report.text)")
    #expect(missing.allSatisfy { $0.explanation.contains("the app's code copied that record's asset into what it saved") })
  }

  @Test func theMergeLessonCatchesOnlyThePlantedApp() throws {
    let file = try Scenario.load("asset-lost-in-merge")
    #expect(ScenarioRunner.run(file, app: PhotosApp.self).report.count(.missingAsset) == 0)
    #expect(ScenarioRunner.run(file, app: PhotosAppMergingServerAssets.self).report.count(.missingAsset) == 2)
  }

  /// The server record of `serverRecordChanged` reaches the delegate with `fileURL` nil, and
  /// what it saves of it has no data.
  @Test func theConflictsServerRecordHasNoFileURL() throws {
    final class Seeing: PhotosApp, @unchecked Sendable {
      nonisolated(unsafe) static var seen: [String] = []
      override func resolveConflict(_ server: SyncRecord, syncEngine: SyncEngine) {
        let asset = server["image"] as? SyncAsset
        Self.seen.append("\(device.name) \(asset.map { "\($0)" } ?? "none")")
        super.resolveConflict(server, syncEngine: syncEngine)
      }
    }
    Seeing.seen = []
    _ = try Self.run(Self.conflict, Seeing.self)
    #expect(Seeing.seen == ["phone SyncAsset(no file: IMG_0042-edited.heic)"])
  }

  // MARK: The device's files

  @Test func aDeleteFileLineDeletesTheAppsFileAndAnUploadFindsNone() throws {
    final class Seeing: PhotosApp, @unchecked Sendable {
      nonisolated(unsafe) static var codes: [SyncError.Code] = []
      override func failed(_ record: SyncRecord, _ error: SyncError, syncEngine: SyncEngine) {
        Self.codes.append(error.code)
        super.failed(record, error, syncEngine: syncEngine)
      }
    }
    Seeing.codes = []
    let text = """
      devices iPad phone
      latency 100ms
      \(Self.schema)
      at 0s    offline iPad
      at 0s    iPad  create Photo p1 caption="Beach" image=asset("IMG_0042.heic", 3MB)
      at 2s    iPad  delete-file p1.image
      at 5s    online iPad
      settle
      """
    let report = try Self.run(text, Seeing.self).report
    #expect(Seeing.codes == [.assetFileNotFound], "\(report.text)")
    // The app does not send the photo again (its file is gone): the photo never leaves, and the
    // iPad shows one whose file it deleted.
    #expect(report.count(.strandedRecord) == 1, "\(report.text)")
    #expect(report.anomalies.contains { $0.kind == .strandedRecord && $0.explanation.contains("assetFileNotFound") }, "\(report.text)")
    #expect(report.anomalies.contains { $0.kind == .missingAsset && $0.explanation.contains("the app deleted its file at 2.000s") }, "\(report.text)")
  }

  @Test func aFileChangedWhileItUploadsIsSentAgain() throws {
    final class Seeing: PhotosApp, @unchecked Sendable {
      nonisolated(unsafe) static var codes: [SyncError.Code] = []
      override func failed(_ record: SyncRecord, _ error: SyncError, syncEngine: SyncEngine) {
        Self.codes.append(error.code)
        super.failed(record, error, syncEngine: syncEngine)
      }
    }
    Seeing.codes = []
    let report = try Self.run(
      """
      devices iPad phone
      latency 200ms
      \(Self.schema)
      at 0s    offline iPad
      at 0s    iPad  create Photo p1 caption="Beach" image=asset("IMG_0042.heic", 3MB)
      at 5s    online iPad
      at 5.1s  iPad  change-file p1.image
      settle
      """, Seeing.self
    ).report
    #expect(Seeing.codes == [.assetFileModified], "\(report.text)")
    #expect(report.passed, "\(report.text)")
  }

  /// A record whose asset is over CloudKit's 50 MB fails alone with `limitExceeded`: the engine
  /// tells the delegate (no split can help) instead of halving the batch for ever.
  @Test func anAssetOverFiftyMegabytesIsTheDelegatesNotAnEndlessSplit() throws {
    final class Seeing: PhotosApp, @unchecked Sendable {
      nonisolated(unsafe) static var codes: [SyncError.Code] = []
      override func failed(_ record: SyncRecord, _ error: SyncError, syncEngine: SyncEngine) {
        Self.codes.append(error.code)
        super.failed(record, error, syncEngine: syncEngine)
      }
    }
    Seeing.codes = []
    let report = try Self.run(
      """
      devices iPad phone
      latency 100ms
      autosync 1s
      \(Self.schema)
      at 0s    iPad  create Photo p1 caption="Video" image=asset("clip.mov", 60MB)
      at 0.5s  iPad  create Photo p2 caption="Beach" image=asset("IMG_0042.heic", 3MB)
      settle
      """, Seeing.self
    ).report
    #expect(Seeing.codes == [.limitExceeded], "\(report.text)")
    #expect(report.count(.stalledSync) == 0, "\(report.text)")
    #expect(report.anomalies.contains { $0.kind == .strandedRecord && $0.explanation.contains("limitExceeded") }, "\(report.text)")
  }

  /// What an app keeps in its container survives a kill; the staging area is emptied by a purge
  /// whatever else holds the file.
  @Test func theFilesAPIBehavesAsFileManager() throws {
    let files = SimFiles(device: "iPad")
    let url = files.write("IMG_0042.heic", size: 3_000_000)
    #expect(url.absoluteString == "sim://iPad/container/IMG_0042.heic")
    #expect(files.fileExists(at: url))
    #expect(files.fileSize(at: url) == 3_000_000)
    let copy = files.containerURL.appendingPathComponent("photos/p1.heic")
    try files.copyItem(at: url, to: copy)
    #expect(throws: CocoaError.self) { try files.copyItem(at: url, to: copy) }
    #expect(throws: CocoaError.self) { try files.copyItem(at: url, to: files.stagingURL.appendingPathComponent("x")) }
    #expect(throws: CocoaError.self) { try files.write(size: 1, to: files.stagingURL.appendingPathComponent("x")) }
    // A copy is the same content: an asset of it is the photo's.
    #expect(files.content(at: copy) == AssetContent(name: "IMG_0042.heic", size: 3_000_000))
    try files.removeItem(at: url)
    #expect(!files.fileExists(at: url))
    #expect(throws: CocoaError.self) { try files.removeItem(at: url) }
    #expect(try files.contentsOfDirectory(at: files.containerURL).map(\.absoluteString) == ["sim://iPad/container/photos/"])
    #expect(try files.contentsOfDirectory(at: files.containerURL.appendingPathComponent("photos")).map(\.lastPathComponent) == ["p1.heic"])
    let staged = files.stage(AssetContent(name: "IMG_7.heic", size: 10))
    #expect(staged.absoluteString == "sim://iPad/staging/IMG_7.heic")
    try files.moveItem(at: staged, to: files.containerURL.appendingPathComponent("IMG_7.heic"))
    #expect(!files.fileExists(at: staged))
    _ = files.stage(AssetContent(name: "IMG_8.heic", size: 10))
    files.purgeStaging()
    #expect(files.holdings() == ["IMG_0042.heic": .init(own: true), "IMG_7.heic": .init(own: true)])
    // Another device's URL, or one outside the device's files, is no file here.
    #expect(!files.fileExists(at: URL(string: "sim://phone/container/photos/p1.heic")!))
    #expect(!files.fileExists(at: URL(fileURLWithPath: "/tmp/p1.heic")))
  }

  // MARK: SyncAsset as a record value

  @Test func anAssetIsARecordValueAndSurvivesEncoding() throws {
    let record = SyncRecord(recordType: "Photo", recordID: SyncRecordID(recordName: "p1", zoneID: SyncRecordZoneID(zoneName: "Records")))
    let url = URL(string: "sim://iPad/container/IMG_0042.heic")!
    record["image"] = SyncAsset(fileURL: url)
    #expect((record["image"] as? SyncAsset)?.fileURL == url)
    #expect(record.changedKeys() == ["image"])
    let fetched = SyncAsset(fileURL: nil, content: AssetContent(name: "IMG_1.heic", size: 42))
    for asset in [SyncAsset(fileURL: url), fetched] {
      let json = try JSONEncoder().encode(SyncValue.asset(asset))
      #expect(try JSONDecoder().decode(SyncValue.self, from: json) == .asset(asset))
      var w = CompactWriter()
      w.value(.asset(asset))
      var r = CompactReader(w.data)
      #expect(try r.value() == .asset(asset))
    }
    #expect(fetched.fileURL == nil)
    #expect("\(fetched)" == "SyncAsset(no file: IMG_1.heic)")
  }

  // MARK: Determinism

  @Test func anAssetRunIsTheSameEveryTime() throws {
    let file = try Self.parse(Self.conflict)
    let check = ScenarioRunner.checkDeterminism(file, app: PhotosApp.self)
    #expect(check.deterministic, "\(check.text)")
    #expect(
      ScenarioRunner.run(file, app: PhotosAppKeepingStagingURLs.self).report.traceHash
        == ScenarioRunner.run(file, app: PhotosAppKeepingStagingURLs.self).report.traceHash)
  }

  /// Fuzz seeds of the photos app's schema (assets drawn as values), each with a staging purge on
  /// every device near its end: the correct app and the reference app pass, the app that keeps
  /// staging URLs does not, and the oracles agree on every run.
  @Test func fuzzSeedsOfTheAssetSchema() throws {
    let shape = WorkloadShape().forApp(AppUnderTest(PhotosApp.self))
    var caught = 0
    for seed in UInt64(1)...4 {
      var (file, _) = WorkloadGenerator.generate(seed: seed, shape: shape, policy: AppUnderTest.judgedAs)
      let purgeAt = (file.timeline.map(\.time).max() ?? .zero) + .seconds(1)
      for device in file.devices {
        file.timeline.append(
          TimelineEntry(time: purgeAt, action: .purgeStaging(device: device), location: Scenarios.SourceLocation(line: 0, column: 0)))
      }
      for app in [AppUnderTest(PhotosApp.self), AppUnderTest(NotesApp.self), AppUnderTest(PhotosAppKeepingStagingURLs.self)] {
        let result = ScenarioRunner._run(
          ScenarioRunner.prepare(file), seed: seed, spec: AppUnderTest.judgedAs, custom: nil, recordObservations: true, app: app)
        let verdicts = result.report.anomalies.map { ReferenceVerdict(kind: $0.kind.rawValue, record: $0.record?.key, field: $0.field?.index) }
          .sorted()
        #expect(ReferenceOracle.judge(result.world) == verdicts, "seed \(seed), \(app.name): \(result.report.text)")
        if app.name == "PhotosAppKeepingStagingURLs" {
          caught += result.report.count(.missingAsset)
        } else {
          #expect(result.report.violations.isEmpty, "seed \(seed), \(app.name): \(result.report.text)")
        }
      }
    }
    #expect(caught > 0)
  }

  // MARK: Encrypted fields

  static let contacts = """
    devices iPad phone
    latency 100ms
    type Contact
      name: string = "" mutable
      phone: string? mutable encrypted
    at 0s    iPad  create Contact c1 name="Ada" phone="555-0100"
    at 5s    phone set c1 phone="555-0199"
    at 6s    offline iPad
    at 7s    iPad  set c1 name="Ada L."
    at 20s   online iPad
    settle
    expect c1.phone == "555-0199"
    expect c1.name == "Ada L."
    """

  @Test func anAppThatWritesEncryptedFieldsThroughEncryptedValuesPasses() throws {
    let report = try Self.run(Self.contacts, ContactsApp.self).report
    #expect(report.passed, "\(report.text)")
  }

  /// A field the schema does not declare, written among `encryptedValues`, comes back there
  /// (the port of a public delegate found it coming back among the plain fields).
  @Test func anUndeclaredEncryptedFieldComesBackEncrypted() throws {
    let report = try Self.run(Self.contacts, ContactsAppWithAPrivateNickname.self).report
    #expect(report.passed, "\(report.text)")
  }

  @Test func anAppThatWritesAnEncryptedFieldInTheClearFailsSayingWhich() throws {
    let report = try Self.run(Self.contacts, ContactsAppWritingPhonesInTheClear.self).report
    #expect(!report.passed)
    #expect(
      report.appErrors.first?.contains(
        "Contact c1 was sent with its field phone set through record[\"phone\"], and the schema marks it encrypted") == true,
      "\(report.appErrors)")
    #expect(report.appErrors.first?.contains("record.encryptedValues[\"phone\"]") == true)
  }

  /// Encrypted values are kept apart from the others, as `CKRecord` keeps them: a field is read
  /// through the accessor it was written through.
  @Test func encryptedValuesAreKeptApart() {
    let record = SyncRecord(recordType: "Contact", recordID: SyncRecordID(recordName: "c1", zoneID: SyncRecordZoneID(zoneName: "Records")))
    record["name"] = "Ada"
    record.encryptedValues["phone"] = "555-0100"
    #expect(record["phone"] == nil)
    #expect(record.encryptedValues["phone"] as? String == "555-0100")
    #expect(record.encryptedValues["name"] == nil)
    #expect(record.allKeys() == ["name"])
    #expect(record.encryptedValues.allKeys() == ["phone"])
    #expect(record.changedKeys() == ["name"])
    #expect(record.encryptedValues.changedKeys() == ["phone"])
    #expect(record.copy().encryptedValues["phone"] as? String == "555-0100")
    #expect(record.description == "Contact c1 (Records): name=string(\"Ada\") phone(encrypted)=string(\"555-0100\")")
  }
}
