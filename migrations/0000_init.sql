CREATE TABLE `bookmarks` (
	`host_id` text NOT NULL,
	`chat_id` text NOT NULL,
	`item_id` text NOT NULL,
	`name` text,
	`excerpt` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`host_id`, `chat_id`, `item_id`)
);
--> statement-breakpoint
CREATE INDEX `bookmarks_chat` ON `bookmarks` (`host_id`,`chat_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `chats` (
	`host_id` text NOT NULL,
	`chat_id` text NOT NULL,
	`title` text,
	`status` text NOT NULL,
	`provider` text NOT NULL,
	`info` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`host_id`, `chat_id`),
	FOREIGN KEY (`host_id`) REFERENCES `hosts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `chats_updated` ON `chats` (`host_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `hosts` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_id` text NOT NULL,
	`name` text NOT NULL,
	`version` text,
	`created_at` integer NOT NULL,
	`last_seen_at` integer,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `hosts_owner` ON `hosts` (`owner_id`);--> statement-breakpoint
CREATE TABLE `requests` (
	`host_id` text NOT NULL,
	`chat_id` text NOT NULL,
	`request_id` text NOT NULL,
	`item_id` text NOT NULL,
	`kind` text NOT NULL,
	`state` text NOT NULL,
	`created_at` integer NOT NULL,
	`settled_with` text,
	`settled_by` text,
	`settled_at` integer,
	PRIMARY KEY(`host_id`, `chat_id`, `request_id`)
);
--> statement-breakpoint
CREATE INDEX `requests_pending` ON `requests` (`host_id`,`chat_id`,`state`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text,
	`name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE TABLE `visuals` (
	`host_id` text NOT NULL,
	`chat_id` text NOT NULL,
	`visual_id` text NOT NULL,
	`title` text NOT NULL,
	`at` integer NOT NULL,
	`max_height` integer NOT NULL,
	`heights` text,
	`size` integer NOT NULL,
	`turn_id` text,
	`layout` text,
	PRIMARY KEY(`host_id`, `chat_id`, `visual_id`)
);
--> statement-breakpoint
CREATE INDEX `visuals_chat` ON `visuals` (`host_id`,`chat_id`,`at`);