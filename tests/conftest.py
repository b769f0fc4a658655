import os

# Every test, and every notebook kernel nbval starts, runs the fast profile.
os.environ.setdefault("COURSE_PROFILE", "fast")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("MPLBACKEND", "Agg")
