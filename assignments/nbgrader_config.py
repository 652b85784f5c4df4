# nbgrader's settings for the course's assignments; this folder is nbgrader's course folder
# (source/<assignment>/<assignment>.ipynb). `make assignments` and `make grade` run nbgrader in a
# copy of it under _build/ (tools/assignment_notebooks.py), so release/, submitted/, autograded/
# and gradebook.db are written there, not here.
c = get_config()  # noqa: F821 -- defined by nbgrader when it loads this file

c.CourseDirectory.course_id = "attention-executed"
# Seconds one cell may run while grading. Every cell here runs in a few seconds at most on a
# laptop; a submission stuck in a loop then loses the cell that hangs, and grading goes on.
c.Execute.timeout = 60
