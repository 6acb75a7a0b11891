@testable import SwellPipeline
import Testing
import SwellPipelineTestSupport

/// Every `${VAR}` value is hidden (`***`) wherever Swell prints it; a value of one or two
/// characters where it stands alone, not inside a longer word or number.
@Suite struct RedactorTests {
    @Test func shortValuesAreHiddenWhereTheyStandAlone() {
        let redactor = Redactor(secrets: ["US", "7", "long-secret-value", ""])
        #expect(redactor("region US, USA, page 17, limit=7&key=long-secret-value (7)")
                == "region ***, USA, page 17, limit=***&key=*** (***)")
        // An empty value hides nothing.
        #expect(redactor("nothing here") == "nothing here")
    }
}
