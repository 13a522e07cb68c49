DROP TABLE sim_answers;
