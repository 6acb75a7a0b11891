import Foundation
import Testing
import SwellPipelineTestSupport

/// The run report is written also when the run fails (Command line reference, "Run
/// report"): a file that does not validate fails the run before it starts, exit 64, and
/// the report says `failed` with every problem, so a CI job reading it learns why.
@Suite struct RunReportOnBadFileTests {
    @Test func aFileThatDoesNotValidateStillGetsAFailedReport() throws {
        let workspace = try Workspace()
        try workspace.write("shop.yml", """
            version: 1
            name: shop
            entities:
              Item: { key: [id], attributes: { id: integer, title: strng } }
            sources:
              - { name: items, entity: Item, url: items.json, retries: lots }
            """)
        let outcome = try workspace.run("run", "shop.yml", "--report", "out/report.json")
        #expect(outcome.status == 64, "\(outcome.stderr)")
        let report = try workspace.report()
        #expect(report["status"] as? String == "failed" && report["pipeline"] as? String == "shop", "\(report)")
        let error = report["error"] as? String ?? ""
        #expect(error.contains("shop.yml:4:") && error.contains("strng"), "\(error)")
        #expect((report["sources"] as? [Any])?.isEmpty == true && (report["exports"] as? [Any])?.isEmpty == true)
    }
}
