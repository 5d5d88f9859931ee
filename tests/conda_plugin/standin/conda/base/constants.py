"""The marks ``conda doctor`` health checks print."""

OK_MARK = "✅"
X_MARK = "❌"
