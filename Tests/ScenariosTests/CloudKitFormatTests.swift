import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// The CloudKit surface in scenario files: what the statements and lines mean, how they are
/// written back, and what a mistake in them says.
@Suite struct CloudKitFormatTests {
  @Test func theStatementsSetTheServersConditions() throws {
    let file = try parsed(Fixtures.cloudKit)
    #expect(file.server.quota == 5_000_000_000)
    #expect(file.server.usedByOthers == 4_900_000_000)
    #expect(
      file.server.throttle
        == Throttle(perDevice: RequestBudget(requests: 10, window: .minutes(1)), app: RequestBudget(requests: 100, window: .minutes(1))))
    #expect(file.server.atomic)
    #expect(file.server.maxRecordsPerRequest == 400)
    #expect(file.server.maxBytesPerRequest == 2_000_000)
    #expect(file.policy.settings.zoneDeleted == .follow)
    let actions = file.timeline.map(\.action)
    #expect(actions.contains(.reject(ids: ["n1", "n2"], error: .zoneBusy, retryAfter: .seconds(30), duration: .minutes(1))))
    #expect(actions.contains(.reject(ids: ["n1"], error: .serverResponseLost, retryAfter: nil, duration: .seconds(10))))
    #expect(actions.contains(.free(bytes: 250_000)))
    #expect(actions.contains(.deleteZone(device: "mac")))
    #expect(actions.contains(.purgeZone(device: "phone")))
    #expect(actions.contains(.encryptedDataReset))
  }

  @Test func withoutThemTheServerIsAsBefore() throws {
    let file = try parsed(Fixtures.minimal)
    #expect(file.server == ServerConditions())
    #expect(!file.rendered().contains("quota"))
    #expect(!file.rendered().contains("limits"))
  }

  @Test func theWriterSpellsThemCanonically() throws {
    let text = try parsed(Fixtures.cloudKit).rendered()
    for line in [
      "quota 5GB used 4900MB", "throttle device 10/1m app 100/1m", "zone atomic", "at 1s reject n1 n2 with zoneBusy retry-after 30s for 1m",
      "at 3s free 250KB", "at 4s mac delete-zone", "at 5s phone purge-zone", "at 6s encrypted-data-reset",
    ] {
      #expect(text.contains(line + "\n"), "\(line)\n\(text)")
    }
  }

  @Test(arguments: [
    ("quota", "expected the account's iCloud storage after 'quota'; write 'quota SIZE [used SIZE]'"),
    ("quota 5", "expected a size such as 500B, 250KB, 2MB or 1.5GB, found '5'"),
    ("quota 1GB used 2GB", "the storage used (2GB) is more than the quota (1GB)"),
    ("quota 1GB usd 2MB", "expected 'used SIZE' after the quota; did you mean 'used'?"),
    ("throttle devices 10/1m", "expected 'device' or 'app'; did you mean 'device'?"),
    ("throttle device 10", "expected a request budget such as 10/1m (1 to 1000000 requests per window), found '10'"),
    ("throttle device 10/0s", "a throttling window must be longer than zero"),
    ("zone atomc", "expected atomic or non-atomic; did you mean 'atomic'?"),
    ("limits 0 records", "expected a whole number of records from 1 to 10000, found '0'"),
    ("at 1s reject n1 with zoneBusyy for 1m", "unknown CloudKit error 'zoneBusyy'; did you mean 'zoneBusy'?"),
    (
      "at 1s reject n1 with limitExceeded for 1m",
      "limitExceeded is not an answer for one record (a request over the limits gets it: see 'limits'); a reject line takes one of: zoneBusy, requestRateLimited, serviceUnavailable, quotaExceeded, referenceViolation, unknownItem, zoneNotFound, userDeletedZone, serverResponseLost, serverRejectedRequest"
    ),
    ("at 1s reject n9 with zoneBusy for 1m", "unknown record 'n9'; did you mean 'n1'?"),
    (
      "at 1s reject n1 with zoneBusy",
      "expected 'for D': how long the server refuses them; write 'at TIME reject ID... with ERROR [retry-after D] for D'"
    ),
    ("at 1s reject n1 with zoneBusy for 0s", "a reject line must last longer than zero"),
    ("at 1s free lots", "expected a size such as 500B, 250KB, 2MB or 1.5GB, found 'lots'"),
    ("at 1s iPad purge-zone now", "unexpected 'now'; write 'DEVICE purge-zone'"),
  ])
  func mistakesSayWhatToWrite(line: String, message: String) {
    #expect(messages(withLine(line)) == [message], "\(line)")
  }
}
