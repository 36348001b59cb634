"""What grading writes and reads: report files, intake, the course folder and gradebook, attnlab's tables, history, deadlines."""
