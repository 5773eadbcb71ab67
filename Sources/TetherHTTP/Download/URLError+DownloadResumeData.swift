public import Foundation

extension URLError {
    /// The resume data of a cancelled or failed download, nil when it cannot be resumed (then
    /// ``downloadNotResumableReason`` says why) or when the error is not a download's.
    public var downloadResumeData: DownloadResumeData? {
        self.userInfo[DownloadResumeData.userInfoKey] as? DownloadResumeData
    }

    /// Why a failed download cannot be resumed (no strong `ETag` or `Last-Modified`, a decoded body, no byte
    /// received), nil when it can or when the error is not a download's.
    public var downloadNotResumableReason: String? {
        self.userInfo[DownloadResumeData.notResumableReasonKey] as? String
    }

    /// This error with the download's resume data or the reason it has none.
    func addingDownload(resumeData: DownloadResumeData?, notResumableReason: String?) -> URLError {
        var info = self.userInfo
        if let resumeData { info[DownloadResumeData.userInfoKey] = resumeData }
        if let notResumableReason, resumeData == nil {
            info[DownloadResumeData.notResumableReasonKey] = notResumableReason
        }
        return URLError(self.code, userInfo: info)
    }
}
